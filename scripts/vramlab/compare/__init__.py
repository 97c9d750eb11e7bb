"""scripts/compare and scripts/matrix: cli (compare's command line), matrix, data (what two
runs differ in, as data), text (how it is printed); summarize, rows and hyperfine_to_csv,
the commands bench.sh, scripts/ab and hyperfine.sh run (scripts/vl compare.NAME)."""
