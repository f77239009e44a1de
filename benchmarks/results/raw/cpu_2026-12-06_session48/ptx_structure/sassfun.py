import re, sys, collections
sys.path.insert(0,'/tmp'); 
def dem(s):
    if '_ZN' not in s: return s[:60]
    s=s[s.rindex('_ZN')+3:]; out=[]; i=0
    while i<len(s) and s[i].isdigit():
        j=i
        while s[j].isdigit(): j+=1
        n=int(s[i:j]); out.append(s[j:j+n]); i=j+n
    return '.'.join(out[2:])
def funcs(path):
    cur=None; st=collections.defaultdict(collections.Counter)
    for l in open(path):
        m=re.match(r'^(\$?_ZN\S+):\s*$', l.strip()) if l.strip().endswith(':') else None
        if m: cur=dem(m.group(1)); continue
        if cur and re.search(r'/\*[0-9a-f]{4,}\*/', l):
            op=re.search(r'\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)', l)
            if op:
                o=op.group(2); st[cur]['_n']+=1
                for k in ('BSSY','BSYNC','BRA','CALL','LDL','STL','LDG','STG','BREAK','WARPSYNC','BMOV','RET'):
                    if o.startswith(k): st[cur][k]+=1
    return st
a=funcs(sys.argv[1]); b=funcs(sys.argv[2])
keys=('_n','BSSY','BRA','CALL','LDL','STL','LDG','STG','BREAK','BMOV','WARPSYNC')
print(f"{'function':40s}", ' '.join(f'{k:>11s}' for k in keys))
for f in sorted(set(a)|set(b)):
    if a.get(f)!=b.get(f):
        print(f"{f[:40]:40s}", ' '.join(f"{a[f][k]:5d}/{b[f][k]:<5d}" for k in keys))
