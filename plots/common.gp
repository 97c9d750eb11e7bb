# Shared gnuplot settings, loaded by every plots/<program>.gp.
# Every plot script is called by scripts/plots.sh as
#   gnuplot -e "files='a.csv b.csv'; labels='raw caching'; out='x.png'" plots/<program>.gp
# files: the CSVs of one program in one results folder (one per allocator/device);
# labels: a short name for each (same order); out: the PNG to write.
set terminal pngcairo size 1100,700 enhanced font 'DejaVu Sans,10'
set output out
set datafile separator ','
set datafile commentschars '#'
set key outside right top box
set grid
nfiles = words(files)
set termoption noenhanced
# Rows of other variants/roles leave some columns empty: treat them as missing so
# lines stay connected across them.
set datafile missing NaN
