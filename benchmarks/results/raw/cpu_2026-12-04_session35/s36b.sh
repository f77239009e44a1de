# lease 1, call 2: branch vs main, kernel alone and solve_batch, interleaved; columns sweep
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1
R=$PWD
L() { (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 120 python $R/benchmarks/bench_kernel_latency.py "${@:2}" >> $OUT/latency.jsonl 2>> $OUT/latency_err_$(basename $1).txt); }
for rep in 1 2; do for t in /tmp/t/ref $R; do L $t --case vdp --sizes 1,1000 --repeats 2; done; done
for t in /tmp/t/ref $R; do L $t --case ik --sizes 10000 --repeats 2; done
L $R --case vdp --sizes 1000 --repeats 2 --threads 1,2,4,8,32
L $R --case vdp --sizes 1000 --repeats 2 --columns --threads 1,4,8,32
L $R --case ik --sizes 10000 --repeats 2 --columns --threads 8,32
cat $OUT/latency.jsonl; tail -3 $OUT/latency_err_*.txt
