# lease 1, call 1 (after staging p1..p5; carry .stage/p6 .gpurun): working tree = branch
# s34-while-loops; .gpurun/ref.tar = main (git archive --prefix=ref/ ... main)
bash .stage/p6/install.sh > /dev/null 2>&1
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1
R=$PWD
mkdir -p ~/.cache && tar -xzf .gpurun/cache.tgz -C ~/.cache
mkdir -p /tmp/t && tar -xf .gpurun/ref.tar -C /tmp/t
C='import sys, time; t=time.perf_counter(); from caspar_backend.compiled.cuda.launch import kernel; kernel(sys.argv[1] == "columns"); print(sys.argv[1], "kernel", time.perf_counter()-t)'
W='from caspar_backend.compiled.solve import warmup; print("cpu", warmup())'
(cd /tmp/t/ref && PYTHONPATH=/tmp/site:/tmp/t/ref python -c "$C" rows > $OUT/cuda_ref.txt 2>&1; PYTHONPATH=/tmp/site:/tmp/t/ref python -c "$W" > $OUT/cpu_ref.txt 2>&1) &
(PYTHONPATH=/tmp/site:$R timeout 560 python -c "$C" rows > $OUT/cuda_new_rows.txt 2>&1) &
(PYTHONPATH=/tmp/site:$R timeout 560 python -c "$C" columns > $OUT/cuda_new_columns.txt 2>&1) &
(PYTHONPATH=/tmp/site:$R python -c "$W" > $OUT/cpu_new.txt 2>&1) &
wait
tail -qn1 $OUT/cuda_ref.txt $OUT/cuda_new_rows.txt $OUT/cuda_new_columns.txt $OUT/cpu_new.txt $OUT/cpu_ref.txt
