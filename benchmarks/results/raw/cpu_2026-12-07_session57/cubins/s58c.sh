#!/usr/bin/env bash
# The VM-built cubins (vm_build.py) timed on the device without compiling anything
# (dev_time.py): 089fd5f's kernel (main), this tree's (new; shared True/False), and this
# tree's with the chains as externs linked to the stub (ext_stub) and to Van der Pol's
# straight-line code (ext_gen); two rounds, interleaved.  Carry .stage/main and .stage/x
# (cubins in .stage/x/cubins, this folder's scripts in .stage/x/cubins too).
export PYTHONDONTWRITEBYTECODE=1
X=$PWD/.stage/x; C=$X/cubins; NEW=$PWD; MAIN=$PWD/.stage/main
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
for round in 1 2; do
  for v in main new ext_stub ext_gen; do
    left=$((${LIMIT:-560} - SECONDS)); [ $left -lt 15 ] && break 2
    case $v in main) T=$MAIN; P=$X/vdp_main.pkl.xz;; *) T=$NEW; P=$X/vdp_new.pkl.xz;; esac
    [ -f $C/$v.cubin ] || continue
    (cd $T && timeout $((left < 120 ? left : 120)) python $C/dev_time.py $T $v $C/$v.cubin $P \
       2>&1 | tee -a $OUT/times.jsonl | grep -v '^{"tree' | tail -5)
  done
done
grep '^{"tree' $OUT/times.jsonl | wc -l
echo "done at ${SECONDS}s"
