export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1
R=$PWD
W='from caspar_backend.compiled.solve import warmup; print("cpu", warmup())'
(cd /tmp/t/ref && PYTHONPATH=/tmp/site:/tmp/t/ref python -c "$W" > $OUT/cpu_ref.txt 2>&1)
tail -1 $OUT/cpu_ref.txt
for rep in 1 2; do for t in /tmp/t/ref $R; do (cd $t && PYTHONPATH=/tmp/site:$t timeout 60 python $R/.gpurun/vdp_gpu.py 1000 3 2>&1 | grep vdp) >> $OUT/vdp_gpu_ab2.txt; done; done
cat $OUT/vdp_gpu_ab2.txt
(cd $R && PYTHONPATH=/tmp/site:$R timeout 120 python benchmarks/bench_service.py --repeat 2 --requests 6000) > $OUT/service.txt 2>&1
grep per_s $OUT/service.txt
