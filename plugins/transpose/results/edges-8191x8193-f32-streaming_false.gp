# Written by kbench plot; run with: gnuplot edges-8191x8193-f32-streaming_false.gp (writes edges-8191x8193-f32-streaming_false.svg and edges-8191x8193-f32-streaming_false.png)
reset
set encoding utf8
$bars << EOD
"smem-padded" 1377.10049 0
"vec16" 2482.20384 0
"vec16-pipe" 2479.26933 0
"window" 2658.40841 0
"vec16-band" 2703.60414 0
"window-hoist" 2379.74687 0
"vec16-band-hoist" 2383.46586 0
"ragged" 3570.38008 0
"cublas" 3392.07763 1
"copy" 4049.53302 1
EOD
set title "edges-8191x8193-f32 point 1\nrows=8191, cols=8193, dtype=f32, block\\_x=8\nblock\\_y=8, band=0, streaming=false\nNVIDIA H200"
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
set output 'edges-8191x8193-f32-streaming_false.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  4475.41597 title "mixed ceiling (4475 GB/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'edges-8191x8193-f32-streaming_false.png'
replot
set output
