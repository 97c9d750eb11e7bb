"""The live PyTorch benchmark (make torch-bench: bench, its statistics bench_stats, the zoo
and its workloads), the trace recorder (record_traces), the snapshot converter
(snapshot_to_csv, snapshot_load) and the analyses of stored runs that findings blocks cite
(binding, conflict, complete_rounds, relocation, steps_from, tradeoff, tradeoff_procs);
README.md says what each does. Run one: scripts/vl torch.NAME [ARGS]."""
