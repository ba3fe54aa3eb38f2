# Written by kbench plot; run with: gnuplot matmul-path-4096-tile_128x256x8.gp (writes matmul-path-4096-tile_128x256x8.svg and matmul-path-4096-tile_128x256x8.png)
reset
set encoding utf8
$bars << EOD
"warptile" 28885.6733 0
"pipelined" 49755.7639 0
EOD
set title "matmul-path-4096 point 3\nm=4096, n=4096, k=4096, precision=f32\ninputs=random, check=auto, block=16, tile=128x256x8\nstages=3\nNVIDIA H200"
set ylabel "throughput (GFLOP/s)"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set xrange [-0.6:1.4]
set style fill solid 0.7 border -1
set boxwidth 0.7
set xtics rotate by -35
set key above horizontal
set terminal svg size 900,560 dynamic enhanced font 'sans,13'
set output 'matmul-path-4096-tile_128x256x8.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  65633.1145 title "fp32 ceiling (65633 GFLOP/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'matmul-path-4096-tile_128x256x8.png'
replot
set output
