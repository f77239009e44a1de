export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/site:$PWD
mkdir -p $OUT/batch
timeout 560 python -m benchmarks.bench_batch --device cuda --single-max 20 --map-threads 16 --out $OUT/batch > $OUT/bench_batch.log 2>&1
echo rc $? >> $OUT/bench_batch.log
grep -v Warning $OUT/bench_batch.log | grep -v "warn(" | tail -30
