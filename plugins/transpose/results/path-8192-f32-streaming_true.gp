# Written by kbench plot; run with: gnuplot path-8192-f32-streaming_true.gp (writes path-8192-f32-streaming_true.svg and path-8192-f32-streaming_true.png)
reset
set encoding utf8
$bars << EOD
"window" 3491.253 0
"vec16-band" 3970.93888 0
"window-hoist" 3870.62309 0
"vec16-band-hoist" 3934.15782 0
"ragged" 3925.41303 0
EOD
set title "path-8192-f32 point 2\nrows=8192, cols=8192, dtype=f32, block\\_x=8\nblock\\_y=8, band=0, streaming=true\nNVIDIA H200"
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
set output 'path-8192-f32-streaming_true.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  4475.41597 title "mixed ceiling (4475 GB/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'path-8192-f32-streaming_true.png'
replot
set output
