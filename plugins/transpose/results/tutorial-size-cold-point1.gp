# Written by kbench plot; run with: gnuplot tutorial-size-cold-point1.gp (writes tutorial-size-cold-point1.svg and tutorial-size-cold-point1.png)
reset
set encoding utf8
$bars << EOD
"naive" 605.413383 0
"smem-padded" 853.889225 0
"reg4" 1180.82882 0
"reg2" 1165.08446 0
"vec16" 1236.52831 0
"vec16-pipe" 1194.27792 0
"vec16-band" 1208.0369 0
"vec16-band-hoist" 1213.62963 0
"cublas" 1052.78713 1
"copy" 1372.48168 1
EOD
set title "tutorial-size-cold point 1\nrows=2048, cols=512, dtype=f32, block\\_x=8\nblock\\_y=8, band=0, streaming=false\nNVIDIA H200"
set ylabel "throughput (GB/s, bytes read + written)"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set xrange [-0.6:9.4]
set style fill solid 0.7 border -1
set boxwidth 0.7
set xtics rotate by -35
set key above horizontal
set terminal svg size 900,560 dynamic enhanced font 'sans,13'
set output 'tutorial-size-cold-point1.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  4475.41597 title "mixed ceiling (4475 GB/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'tutorial-size-cold-point1.png'
replot
set output
