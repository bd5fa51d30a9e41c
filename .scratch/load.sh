#!/bin/sh
# busy loops on both cores for $1 seconds, then exit (started and ended by this script only)
timeout "$1" python3 -c 'while 1: pass' & A=$!
timeout "$1" python3 -c 'while 1: pass' & B=$!


wait $A $B
