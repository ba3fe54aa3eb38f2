# Written by kbench plot; run with: gnuplot headline-16384-u16-streaming_true.gp (writes headline-16384-u16-streaming_true.svg and headline-16384-u16-streaming_true.png)
reset
set encoding utf8
$bars << EOD
"window" 2055.02395 0
"vec16-band" 4040.26869 0
"window-hoist" 3121.77811 0
"vec16-band-hoist" 4039.53914 0
"ragged" 3689.32728 0
EOD
set title "headline-16384-u16 point 2\nrows=16384, cols=16384, dtype=u16, block\\_x=8\nblock\\_y=8, band=0, streaming=true\nNVIDIA H200"
set ylabel "throughput (GB/s, bytes read + written)"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set xrange [-0.6:4.4]
set style fill solid 0.7 border -1
set boxwidth 0.7
set xtics rotate by -35
set key above horizontal
set terminal svg size 900,560 dynamic enhanced font 'sans,13'
set output 'headline-16384-u16-streaming_true.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  4475.41597 title "mixed ceiling (4475 GB/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'headline-16384-u16-streaming_true.png'
replot
set output
