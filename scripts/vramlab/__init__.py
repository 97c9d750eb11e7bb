"""vramlab's analysis tools: one package, imported normally by every tool of scripts/.

  results    reading results folders and CSVs (read_csv), the git revision a result records
  rankstats  rank statistics (Mann-Whitney, Hodges-Lehmann, signed rank, Benjamini-Hochberg)
  verdict    the one verdict vocabulary and its rules (compare, matrix, torch-bench, cold)
  fmt        the one number formatter;  outputs  output files by the C programs' -o rules
  pairing, covariate, cold, noise, history; compare/ (compare, matrix, summarize, ...);
  torch/ (the live PyTorch benchmark and its analyses; torch/research/: studies no target uses)

The executables of scripts/ are thin launchers: python puts a script's own folder (after
resolving a symlink to it) first on sys.path, so `import vramlab` works from any working
directory with no sys.path edit. scripts/vl MODULE [ARGS] runs any module that has a
command line, as `python3 -m vramlab.MODULE` would (scripts/vl torch.bench --dry-run)."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout
