import sys, collections
def body(f, name):
    src=open(f).read().split('\n')
    s=[i for i,l in enumerate(src) if l.startswith('.weak .func') and name in l]
    j=s[-1]
    while src[j]!='{': j+=1
    k=j
    while src[k]!='}': k+=1
    return [l.strip() for l in src[j:k] if l.strip() and not l.strip().startswith('//')]
for f in sys.argv[2:]:
    b=body(f, sys.argv[1])
    ins=[l for l in b if not l.startswith('$') and not l.startswith('.') and l not in '{}']
    c=collections.Counter(l.split()[0].split('.')[0] if not l.startswith('@') else l.split()[1].split('.')[0] for l in ins)
    print(f, len(ins), c.most_common(12))
    open(f+'.'+sys.argv[1]+'.txt','w').write('\n'.join(b))
