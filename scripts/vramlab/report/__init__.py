"""The run and comparison reports of scripts/report (collect, answers, doc, render; cli: its command line)."""
