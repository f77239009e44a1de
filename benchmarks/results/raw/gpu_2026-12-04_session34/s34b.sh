export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/site:$PWD
C='import time; t=time.perf_counter(); from caspar_backend.compiled.cuda.launch import kernel; kernel(False); print("cuda rows kernel", time.perf_counter()-t)'
W='from caspar_backend.compiled.solve import warmup; print("cpu", warmup())'
if [ -f .gpurun/cache.tgz ]; then mkdir -p ~/.cache && tar -xzf .gpurun/cache.tgz -C ~/.cache; fi
(python -c "$C" > $OUT/cuda.txt 2>&1) &
(python -c "$W" > $OUT/cpu.txt 2>&1) &
wait
tail -qn1 $OUT/cuda.txt $OUT/cpu.txt
tar -czf $OUT/cache.tgz -C ~/.cache caspar && ls -la $OUT/cache.tgz
timeout 250 python .gpurun/vdp_sweep.py 1 66 132 264 528 1000 2000 2>&1 | grep sweep | tee $OUT/sweep.txt
TPB=1 timeout 150 python .gpurun/vdp_sweep.py 528 1000 2>&1 | grep sweep | tee -a $OUT/sweep.txt
