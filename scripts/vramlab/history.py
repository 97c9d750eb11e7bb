"""What each job of the suite took in earlier runs, for scripts/bench.sh's estimate of
the time left: reads every manifest.csv under the results folders given (a run, its
rep-<k>/ or gpu<N>/), keeps the jobs that ran to the end ("ok") in runs of the same
kind (quick or not: env.txt's "quick:" line), and prints one line per job,
"<csv name> <median seconds>". Folders named with --exclude (the run being written)
are left out. Unreadable manifests are passed over: this is an estimate, not a result.
Usage: scripts/vl history --quick 0|1 [--exclude DIR] RESULTS_DIR..."""
import argparse
import csv
import os
import statistics
import sys


def quick_of(folder):
    """The run's quick flag from env.txt ("quick: 1"), or None when it does not say."""
    try:
        with open(os.path.join(folder, "env.txt")) as f:
            for line in f:
                if line.startswith("quick:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def main():
    ap = argparse.ArgumentParser(usage=__doc__.splitlines()[-1])
    ap.add_argument("--quick", choices=["0", "1"], required=True)
    ap.add_argument("--exclude", default="")
    ap.add_argument("roots", nargs="+")
    a = ap.parse_args()
    exclude = os.path.realpath(a.exclude) if a.exclude else None
    seconds = {}
    for root in a.roots:
        for folder, dirs, files in os.walk(root):
            if exclude and (os.path.realpath(folder) + "/").startswith(exclude + "/"):
                dirs[:] = []
                continue
            if "manifest.csv" not in files or quick_of(folder) != a.quick:
                continue
            try:
                with open(os.path.join(folder, "manifest.csv"), newline="") as f:
                    for row in csv.DictReader(f):
                        if row.get("status") == "ok" and row.get("csv"):
                            seconds.setdefault(row["csv"], []).append(float(row["seconds"]))
            except (OSError, ValueError, KeyError, csv.Error):
                continue
    for name in sorted(seconds):
        print(f"{name} {statistics.median(seconds[name]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
