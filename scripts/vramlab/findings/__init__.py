"""The generated figures of the README and docs (scripts/findings; spec, figures, stored, readme_blocks, citations); data: figures.tsv, blocks/."""
