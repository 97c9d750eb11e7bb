#!/usr/bin/env bash
# The table "What this machine can resolve" in docs/comparing.md, recomputed with this tree's
# scripts/compare from the stored acceptance trials (results/reference/h100-compare/
# {aa,slow}-trials.txz, from tests/compare/gpu_ab.sh aa/slow): one line per trial, then
# the table in Markdown, one row per experiment and pair count. The stored trials
# predate the COMPLETE mark, so they are compared with --allow-incomplete (every pass of
# them finished: each rc file says 0).
# Usage: tests/compare/trials.sh [ARCHIVE...]   (default: the two stored archives)
set -u
cd "$(dirname "$0")/../.."
ref=results/reference/h100-compare
[ $# -gt 0 ] || set -- "$ref/aa-trials.txz" "$ref/slow-trials.txz"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for archive in "$@"; do tar xf "$archive" -C "$tmp" || { echo "trials: cannot unpack $archive" >&2; exit 2; }; done
echo "# trial  pairs  exit  metrics_same  alloc_sizes_slower  free_slower"
for d in "$tmp"/results/*/; do
    t=$(basename "$d")
    scripts/compare --no-plots --allow-incomplete --out "$tmp/cmp-$t" "$d/A" "$d/B" >"$tmp/$t.log" 2>&1
    rc=$?
    awk -F, -v t="$t" -v rc="$rc" '
        /^#/ || $1 == "index" { next }
        { n++; if ($20 == "same") same++ }
        $5 == "alloc_median" { sizes++; if ($20 == "slower") slow++ }
        $5 == "free_median" && $20 == "slower" { free++ }
        END { split(t, w, "-"); printf "%-20s %s %d %.1f%% %d/%d %d\n", t, w[2], rc, 100 * same / n, slow, sizes, free }' \
        "$tmp/cmp-$t/compare.csv"
done | tee "$tmp/lines"
echo
echo "| experiment | pairs | trials | exit 0 / 1 / 2 | metrics \`same\` (range over trials) | alloc slower at every size | free reported slower |"
echo "|---|---|---|---|---|---|---|"
awk '{ split($1, w, "-"); k = w[1] " " $2; trials[k]++; ex[k, $3]++
       s = $4 + 0; if (!(k in lo) || s < lo[k]) lo[k] = s; if (!(k in hi) || s > hi[k]) hi[k] = s
       split($5, f, "/"); if (f[1] == f[2]) every[k]++; if ($6 > 0) fr[k]++ }
     END { for (k in trials) { split(k, p, " ")
             printf "| %s | %s | %d | %d / %d / %d | %.1f–%.1f%% | %s | %d of %d |\n",
               p[1] == "aa" ? "A/A, identical setting" : "+150 ns per alloc", p[2], trials[k],
               ex[k, 0], ex[k, 1], ex[k, 2], lo[k], hi[k],
               p[1] == "aa" ? "—" : (every[k] + 0) " of " trials[k], fr[k] + 0, trials[k] } }' "$tmp/lines" | sort -t'|' -k2,2r -k3,3n
