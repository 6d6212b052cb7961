C=$PWD/.carry; export LD_LIBRARY_PATH=$C/lib:$C/deps:/usr/local/cuda/lib64 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN MKCCL_GPU_WATCHDOG=3
timeout 12 $C/bin/test_gpu_coll proc 2 quick 2>&1 | grep -v "^case\|^launched" | head -30
echo ==== thread; TEST_GPU_VERBOSE=1 timeout 10 $C/bin/test_gpu_coll thread 2 quick 2>&1 | grep -v "^launched" | head -30
N=$(python3 -c "import nvidia.nccl,os;print(nvidia.nccl.__path__[0])")
echo ==== nccl; LD_LIBRARY_PATH=$N/lib:$C/deps:/usr/local/cuda/lib64 timeout 25 $C/bin/mkccl-run -n 2 -- $C/bin/mkccl-perf-gpu all_reduce -b 1M -e 1G -f 4 -n 10 -w 3 -c 0 2>&1 | tail -12
