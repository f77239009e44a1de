export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
NEW=$PWD; X=$PWD/.stage/x
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 440 python $X/k55.py new $X/vdp_new.pkl.xz time 2>&1 | grep -v "Warn\|warn(" | tee -a $OUT/times.jsonl)
echo "done at ${SECONDS}s"
