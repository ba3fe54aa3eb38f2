# Written by kbench plot; run with: gnuplot sort-headline-keys-key_u32.gp (writes sort-headline-keys-key_u32.svg and sort-headline-keys-key_u32.png)
reset
set encoding utf8
$bars << EOD
"radix" 93.1901267 0
"onesweep" 171.590259 0
"onesweep-early" 404.309223 0
"cub-radix" 339.643821 1
"thrust" 329.713336 1
EOD
set title "sort-headline-keys point 1\nn=268435456, key=u32, values=none, dist=uniform\ntile=auto, hist=auto\nNVIDIA H200"
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
set output 'sort-headline-keys-key_u32.svg'
plot $bars using 0:($3 == 0 ? $2 : 1/0):xtic(1) with boxes lc 1 title "kernel", \
  $bars using 0:($3 == 1 ? $2 : 1/0) with boxes lc rgb '#404040' fs pattern 2 title "library", \
  4467.66951 title "mixed ceiling (4468 GB/s)" with lines lw 2 dt 4 lc rgb '#c00000'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,560 enhanced font 'sans,11'
} else {
    set terminal png size 900,560 enhanced
}
set output 'sort-headline-keys-key_u32.png'
replot
set output
