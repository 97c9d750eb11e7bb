"""Flattens a hyperfine --export-json file into CSV for gnuplot (plots/hyperfine.gp):
one row per timed run: program (the command's first word, basename), command, run, time_ms."""
import csv
import json
import os
import sys


def main(path):
    with open(path) as f:
        data = json.load(f)
    w = csv.writer(sys.stdout)
    w.writerow(["program", "command", "run", "time_ms"])
    for result in data.get("results", []):
        command = result.get("command", "")
        program = os.path.basename(command.split()[0]) if command else "?"
        for i, t in enumerate(result.get("times", []), 1):
            w.writerow([program, command, i, f"{t * 1e3:.3f}"])


if __name__ == "__main__":
    main(sys.argv[1])
