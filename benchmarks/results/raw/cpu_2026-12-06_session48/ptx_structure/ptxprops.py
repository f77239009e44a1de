import re,sys,json
def dem(s):
    if '_ZN' not in s: return s[:60]
    s=s[s.index('_ZN')+3:]; out=[]; i=0
    while i<len(s) and s[i].isdigit():
        j=i
        while s[j].isdigit(): j+=1
        n=int(s[i:j]); out.append(s[j:j+n]); i=j+n
    return '.'.join(out[2:])
def props(path):
    L=open(path).read().splitlines(); out={}; name=None
    for l in L:
        m=re.search(r"Function properties for (\S+)",l)
        if m: name=dem(m.group(1)); continue
        if 'stack frame' in l and name:
            k=name; c=1
            while k in out: c+=1; k=f"{name}#{c}"
            out[k]=l.strip(); name=None
    return out
a=props(sys.argv[1]); b=props(sys.argv[2])
for k in sorted(set(a)|set(b)):
    if a.get(k)!=b.get(k): print(f"{k:45s} {a.get(k)}\n{'':45s} {b.get(k)}")
