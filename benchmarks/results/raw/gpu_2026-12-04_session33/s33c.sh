export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/site:$PWD
timeout 570 python -m pytest -q -m gpu -n 8 -p no:cacheprovider > $OUT/pytest_gpu.log 2>&1
echo rc $? >> $OUT/pytest_gpu.log
tail -15 $OUT/pytest_gpu.log
