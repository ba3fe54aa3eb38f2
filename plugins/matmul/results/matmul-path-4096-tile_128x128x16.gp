# Written by kbench plot; run with: gnuplot matmul-path-4096-tile_128x128x16.gp (writes matmul-path-4096-tile_128x128x16.svg and matmul-path-4096-tile_128x128x16.png)
reset
set encoding utf8
$bars << EOD
"naive" 5381.85435 0
"tiled" 8103.15415 0
"coalesced" 5828.99578 0
"reg1d" 12025.2639 0
"reg2d" 15381.0543 0
"vec4" 33119.7354 0
"warptile" 36223.0522 0
"pipelined" 37613.453 0
"cublas" 50889.4432 1
EOD
set title "matmul-path-4096 point 1\nm=4096, n=4096, k=4096, precision=f32\ninputs=random, check=auto, block=16, tile=128x128x16\nstages=3\nNVIDIA H200"
set ylabel "throughput (GFLOP/s)"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set xrange [-0.6:8.4]
set style fill solid 0.7 border -1
set boxwidth 0.7
set xtics rotate by -35
set key above horizontal
set terminal svg size 900,560 dynamic enhanced font 'sans,13'
set output 'matmul-path-4096-tile_128x128x16.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  65633.1145 title "fp32 ceiling (65633 GFLOP/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'matmul-path-4096-tile_128x128x16.png'
replot
set output
