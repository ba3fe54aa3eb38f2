# Written by kbench plot; run with: gnuplot path-8192-f32-streaming_false.gp (writes path-8192-f32-streaming_false.svg and path-8192-f32-streaming_false.png)
reset
set encoding utf8
$bars << EOD
"naive" 840.921062 0
"naive-mirror" 839.490432 0
"smem" 988.697979 0
"smem-padded" 1389.53253 0
"smem-swizzled" 1405.18581 0
"reg4" 3545.48085 0
"reg2" 3210.95045 0
"vec16" 3469.59286 0
"vec16-pipe" 3656.76042 0
"window" 3523.51482 0
"vec16-band" 3663.14745 0
"window-hoist" 3841.8173 0
"vec16-band-hoist" 3355.77878 0
"ragged" 3856.83142 0
"cublas" 3672.36863 1
"copy" 4066.21814 1
EOD
set title "path-8192-f32 point 1\nrows=8192, cols=8192, dtype=f32, block\\_x=8\nblock\\_y=8, band=0, streaming=false\nNVIDIA H200"
set ylabel "throughput (GB/s, bytes read + written)"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set xrange [-0.6:15.4]
set style fill solid 0.7 border -1
set boxwidth 0.7
set xtics rotate by -35
set key above horizontal
set terminal svg size 900,560 dynamic enhanced font 'sans,13'
set output 'path-8192-f32-streaming_false.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  4473.92423 title "mixed ceiling (4474 GB/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'path-8192-f32-streaming_false.png'
replot
set output
