import csv, sys
def load(p):
    return {(r['model'], r['size']): r for r in csv.DictReader(open(p))}
a=load(sys.argv[1]); b=load(sys.argv[2])
same=0
for k in a:
    ra, rb = a[k], b.get(k)
    if rb is None: print(k,'missing'); continue
    t = (ra['cpu_status'], ra['cpu_iter'], ra['cpu_f'])==(rb['cpu_status'], rb['cpu_iter'], rb['cpu_f'])
    same += t
    flag = '' if t else '  <-- differs'
    print(f"{k[0]:14s} {k[1]:12s} {ra['ipopt_iter']:>5s} | {ra['cpu_status'][:18]:18s} {ra['cpu_iter']:>5s} {float(ra['cpu_solve_s']):8.3f} {ra.get('cpu_path','')[:9]:9s} | {rb['cpu_status'][:18]:18s} {rb['cpu_iter']:>5s} {float(rb['cpu_solve_s']):8.3f} {rb.get('cpu_path','')[:9]:9s} df={abs(float(ra['cpu_f'])-float(rb['cpu_f']))/max(1,abs(float(ra['cpu_f']))):.1e}{flag}")
print(same, 'of', len(a), 'identical')
