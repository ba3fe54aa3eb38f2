# Written by kbench plot; run with: gnuplot sort-small-sizes-key_u32.gp (writes sort-small-sizes-key_u32.svg and sort-small-sizes-key_u32.png)
reset
set encoding utf8
$v0 << EOD
1048576 27.5926536
16777216 23.7963213
EOD
$v1 << EOD
1048576 38.5109438
16777216 38.6948047
EOD
$v2 << EOD
1048576 71.1574377
16777216 92.51189
EOD
$v3 << EOD
1048576 73.6049395
16777216 152.0998
EOD
$v4 << EOD
1048576 109.959732
16777216 322.551924
EOD
$v5 << EOD
1048576 102.761266
16777216 289.222451
EOD
$v6 << EOD
1048576 88.5472061
16777216 173.27897
EOD
$v7 << EOD
1048576 49.275188
16777216 195.511298
EOD
set title "sort-small-sizes (key=u32), NVIDIA H200"
set xlabel "n (elements, log_2 scale)"
set ylabel "throughput (GB/s, bytes read + written)"
set logscale x 2
set format x '2^{%L}'
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid
set key outside right top vertical
set style data linespoints
set terminal svg size 900,560 dynamic enhanced font 'sans,13'
set output 'sort-small-sizes-key_u32.svg'
plot \
  $v0 using 1:2 title "bitonic" lw 1.5 pt 5 lc 1, \
  $v1 using 1:2 title "merge" lw 1.5 pt 6 lc 2, \
  $v2 using 1:2 title "radix" lw 1.5 pt 7 lc 3, \
  $v3 using 1:2 title "onesweep" lw 1.5 pt 8 lc 4, \
  $v4 using 1:2 title "onesweep-early" lw 1.5 pt 9 lc 5, \
  $v5 using 1:2 title "cub-radix (library)" lw 3 dt 2 pt 4 ps 1.2 lc rgb '#000000', \
  $v6 using 1:2 title "cub-merge (library)" lw 3 dt 2 pt 4 ps 1.2 lc rgb '#606060', \
  $v7 using 1:2 title "thrust (library)" lw 3 dt 2 pt 4 ps 1.2 lc rgb '#000000', \
  4467.66951 title "mixed ceiling (4468 GB/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'sort-small-sizes-key_u32.png'
replot
set output
