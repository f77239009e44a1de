import threading, time, sys
from collections import deque
from _thread import allocate_lock
N=20000; C=64
mode=sys.argv[1] if len(sys.argv)>1 else 'lock'
items=deque(); cond=threading.Condition()
lat=[0.0]*N
def worker():
    while True:
        with cond:
            while not items: cond.wait()
            t0=items[0][2]
            while True:
                left=t0+WAIT-time.monotonic()
                if left<=0 or len(items)>=C: break
                cond.wait(left)
            batch=list(items); items.clear()
        for g,_,_ in batch:
            g.release()
WAIT=float(sys.argv[2]) if len(sys.argv)>2 else 0.0005
def client(k):
    bar.wait()
    for i in range(k,N,C):
        t=time.perf_counter()
        g=allocate_lock(); g.acquire()
        with cond:
            items.append((g,i,time.monotonic()))
            if len(items)==1 or len(items)>=C: cond.notify()
        g.acquire()
        lat[i]=time.perf_counter()-t
bar=threading.Barrier(C+1)
for _ in range(2): threading.Thread(target=worker,daemon=True).start()
ts=[threading.Thread(target=client,args=(k,)) for k in range(C)]
[t.start() for t in ts]; bar.wait(); t=time.perf_counter(); [t_.join() for t_ in ts]; T=time.perf_counter()-t
lat.sort(); print(f"wait={WAIT} {N/T:.0f}/s p50 {lat[N//2]*1e3:.2f} ms p99 {lat[int(N*.99)]*1e3:.2f} ms")
