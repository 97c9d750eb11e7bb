"""Studies of the torch-bench that no make target, test or findings block runs, kept where
they can still run (scripts/vl torch.research.NAME): record_steps (one workload's per-step
device calls and allocator time in one process) and steps_summary (a folder of those as a
table; plots/zoo_steps.gp draws it). Their results: results/reference/h100-zoo-steps."""
