# Written by kbench plot; run with: gnuplot matmul-tc-fp32x3-8192-point1.gp (writes matmul-tc-fp32x3-8192-point1.svg and matmul-tc-fp32x3-8192-point1.png)
reset
set encoding utf8
$bars << EOD
"mma" 53455.0621 0
"wgmma" 117343.622 0
"cublas" 51033.8491 1
EOD
set title "matmul-tc-fp32x3-8192 point 1\nm=8192, n=8192, k=8192, precision=fp32x3\ninputs=random, check=sampled, block=16, tile=128x128x16\nstages=3\nNVIDIA H200"
set ylabel "throughput (GFLOP/s)"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set xrange [-0.6:2.4]
set style fill solid 0.7 border -1
set boxwidth 0.7
set xtics rotate by -35
set key above horizontal
set terminal svg size 900,560 dynamic enhanced font 'sans,13'
set output 'matmul-tc-fp32x3-8192-point1.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  65873.2387 title "fp32 ceiling (65873 GFLOP/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'matmul-tc-fp32x3-8192-point1.png'
replot
set output
