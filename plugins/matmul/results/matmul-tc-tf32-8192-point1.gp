# Written by kbench plot; run with: gnuplot matmul-tc-tf32-8192-point1.gp (writes matmul-tc-tf32-8192-point1.svg and matmul-tc-tf32-8192-point1.png)
reset
set encoding utf8
$bars << EOD
"wmma" 31755.2368 0
"mma" 134034.215 0
"wgmma" 359110.984 0
"cublas-tf32" 410979.535 1
EOD
set title "matmul-tc-tf32-8192 point 1\nm=8192, n=8192, k=8192, precision=tf32\ninputs=random, check=sampled, block=16, tile=128x128x16\nstages=3\nNVIDIA H200"
set ylabel "throughput (GFLOP/s)"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set xrange [-0.6:3.4]
set style fill solid 0.7 border -1
set boxwidth 0.7
set xtics rotate by -35
set key above horizontal
set terminal svg size 900,560 dynamic enhanced font 'sans,13'
set output 'matmul-tc-tf32-8192-point1.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  321129.966 title "tf32 mma.sync ceiling (321130 GFLOP/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'matmul-tc-tf32-8192-point1.png'
replot
set output
