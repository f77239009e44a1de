export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1
R=$PWD
mkdir -p /tmp/t && tar -xf .gpurun/ref.tar -C /tmp/t
W='from caspar_backend.compiled.solve import warmup; print(warmup())'
(cd /tmp/t/ref && PYTHONPATH=/tmp/site:/tmp/t/ref python -c "$W" > $OUT/w_ref.txt 2>&1) &
PYTHONPATH=/tmp/site:$R python -c "$W" > $OUT/w_new.txt 2>&1
wait
for rep in 1 2; do
  (cd /tmp/t/ref && PYTHONPATH=/tmp/site:/tmp/t/ref timeout 100 python $R/.gpurun/cpu_variants.py default 2>&1 | grep median) >> $OUT/variants.txt
  for v in default onecall static; do
    (cd $R && PYTHONPATH=/tmp/site:$R timeout 100 python $R/.gpurun/cpu_variants.py $v 2>&1 | grep median) >> $OUT/variants.txt
  done
done
cat $OUT/variants.txt
