export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1
mkdir -p $OUT/batch
timeout 480 python -m benchmarks.bench_batch --device cuda --single-max 20 --map-threads 16 --out $OUT/batch > $OUT/bench_batch.log 2>&1
echo rc $? >> $OUT/bench_batch.log
tail -40 $OUT/bench_batch.log
