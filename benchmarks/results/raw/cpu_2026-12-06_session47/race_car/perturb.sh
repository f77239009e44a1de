#!/bin/bash
# iteration counts of IPOPT and caspar (default options) with the initial T perturbed by eps (relative)
cd /tmp/helperB/scratch
for s in ipopt caspar; do
  line="$s:"
  for e in 0 1e-15 -1e-15 1e-14 -1e-14 1e-13 -1e-13 1e-12 -1e-12 1e-11 -1e-11 1e-10; do
    it=$(T0_PERTURB=$e python race_car.py $s /dev/null print_level=0 2>&1 | sed -n 's/.*iter=\([0-9]*\).*/\1/p')
    line="$line $e:$it"
  done
  echo "$line"
done
