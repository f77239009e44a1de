export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1
R=$PWD
mkdir -p ~/.cache && tar -xzf .gpurun/cache.tgz -C ~/.cache
mkdir -p /tmp/t && tar -xf .gpurun/ref.tar -C /tmp/t
C='import time; t=time.perf_counter(); from caspar_backend.compiled.cuda.launch import kernel; kernel(False); print("cuda rows kernel", time.perf_counter()-t)'
W='from caspar_backend.compiled.solve import warmup; print("cpu", warmup())'
(cd /tmp/t/ref && PYTHONPATH=/tmp/site:/tmp/t/ref python -c "$C" > $OUT/cuda_ref.txt 2>&1) &
(PYTHONPATH=/tmp/site:$R python -c "$C" > $OUT/cuda_new.txt 2>&1) &
(PYTHONPATH=/tmp/site:$R python -c "$W" > $OUT/cpu_new.txt 2>&1) &
wait
tail -qn1 $OUT/cuda_ref.txt $OUT/cuda_new.txt $OUT/cpu_new.txt
for rep in 1 2 3; do for t in /tmp/t/ref $R; do (cd $t && PYTHONPATH=/tmp/site:$t timeout 60 python $R/.gpurun/vdp_gpu.py 1000 3 2>&1 | grep vdp) >> $OUT/vdp_gpu_ab.txt; done; done
for rep in 1 2; do for t in /tmp/t/ref $R; do (cd $t && PYTHONPATH=/tmp/site:$t timeout 60 python $R/.gpurun/ik_gpu.py 10000 3 2>&1 | grep " ik ") >> $OUT/ik_gpu_ab.txt; done; done
cat $OUT/vdp_gpu_ab.txt $OUT/ik_gpu_ab.txt
(PYTHONPATH=/tmp/site:$R timeout 60 python .gpurun/kt.py same 2 1 1000 2>&1 | grep "^kt") | tee $OUT/kt_new.txt
