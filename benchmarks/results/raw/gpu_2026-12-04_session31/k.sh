export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1
R=$PWD
mkdir -p /tmp/t && tar -xf .gpurun/ref.tar -C /tmp/t && tar -xf .gpurun/ef.tar -C /tmp/t
W='from caspar_backend.compiled.solve import warmup; print(warmup())'
(cd /tmp/t/ref && PYTHONPATH=/tmp/site:/tmp/t/ref python -c "$W" > $OUT/w_ref.txt 2>&1) &
(cd /tmp/t/ef && PYTHONPATH=/tmp/site:/tmp/t/ef python -c "$W" > $OUT/w_ef.txt 2>&1) &
PYTHONPATH=/tmp/site:$R python -c "$W" > $OUT/w_new.txt 2>&1
wait
cat $OUT/w_*.txt
for rep in 1 2; do
  for t in /tmp/t/ref /tmp/t/ef $R; do
    (cd $t && PYTHONPATH=/tmp/site:$t timeout 100 python $R/.gpurun/vdp_cpu.py 1000 2>&1 | grep median) >> $OUT/vdp_cpu.txt
  done
done
cat $OUT/vdp_cpu.txt
