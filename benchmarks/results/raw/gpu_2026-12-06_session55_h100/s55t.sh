export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
NEW=$PWD; MAIN=$PWD/.stage/main; X=$PWD/.stage/x
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 150 python $X/k55.py new $X/vdp_new.pkl.xz time 2>&1 | grep -v Warn | tee -a $OUT/times.jsonl)
(cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN timeout 100 python $X/k55.py main $X/vdp_main.pkl.xz time 2>&1 | grep -v Warn | tee -a $OUT/times.jsonl)
echo "done at ${SECONDS}s"
