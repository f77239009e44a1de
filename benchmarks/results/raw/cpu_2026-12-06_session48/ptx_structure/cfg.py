import re, sys, collections
def func_body(path, name='solve_instance'):
    L = open(path).read().splitlines()
    for i, l in enumerate(L):
        if l.startswith(('.weak .func', '.visible .func', '.func')) and name in l:
            j = i
            while not L[j].startswith('{'):
                j += 1
                if L[j].rstrip().endswith(';') and not L[j].startswith('{') and L[j].strip() == ';':
                    break
            if L[j].startswith('{'):
                k = j + 1
                while not L[k].startswith('}'):
                    k += 1
                return L[j + 1:k]
    raise SystemExit('not found')
def cfg(body):
    blocks = collections.OrderedDict(); cur = 'ENTRY'; blocks[cur] = []
    succ = collections.defaultdict(list); order = [cur]; ended = False
    def newblock(n):
        nonlocal cur
        blocks[n] = []; order.append(n); cur = n
    anon = 0
    for l in body:
        t = l.strip()
        m = re.match(r'^(\$\w+):$', t)
        if m:
            if not ended: succ[cur].append(m.group(1))
            newblock(m.group(1)); ended = False; continue
        if not t or t.startswith('//'): continue
        if ended:
            anon += 1; newblock(f'anon{anon}'); ended = False
        blocks[cur].append(t)
        mb = re.match(r'^(@!?%p\d+\s+)?bra(\.uni)?\s+(\$\w+);', t)
        if mb:
            succ[cur].append(mb.group(3))
            if mb.group(1):  # conditional: fallthrough
                anon += 1; nb = f'anon{anon}'; succ[cur].append(nb); newblock(nb)
            else:
                ended = True
        elif re.match(r'^(@!?%p\d+\s+)?ret', t):
            if t.startswith('@'):
                anon += 1; nb = f'anon{anon}'; succ[cur].append(nb); newblock(nb)
            else:
                ended = True
    return order, blocks, succ
def analyze(path):
    order, blocks, succ = cfg(func_body(path))
    preds = collections.defaultdict(list)
    for u in order:
        for v in succ[u]: preds[v].append(u)
    # reachable
    seen = set(); st = ['ENTRY']
    while st:
        u = st.pop()
        if u in seen: continue
        seen.add(u); st += succ[u]
    nodes = [n for n in order if n in seen]
    dom = {n: set(nodes) for n in nodes}; dom['ENTRY'] = {'ENTRY'}
    changed = True
    while changed:
        changed = False
        for n in nodes[1:]:
            ps = [dom[p] for p in preds[n] if p in seen]
            new = set.intersection(*ps) | {n} if ps else {n}
            if new != dom[n]: dom[n] = new; changed = True
    loops = {}
    for u in nodes:
        for v in succ[u]:
            if v in dom[u]:   # back edge u -> v
                body = {v}; st = [u]
                while st:
                    x = st.pop()
                    if x in body: continue
                    body.add(x); st += [p for p in preds[x] if p in seen]
                loops.setdefault(v, set()).update(body)
    def calls(bs):
        c = collections.Counter()
        for b in bs:
            for t in blocks[b]:
                m = re.search(r'(_ZN\w+)', t) if 'call' in t or t.startswith('_ZN') else None
        return c
    # name calls per block: call lines then a name line
    callnames = collections.defaultdict(list)
    for b in nodes:
        for t in blocks[b]:
            m = re.match(r'^(_ZN\w+),?$', t)
            if m:
                s = m.group(1); s = s[s.rindex('_ZN') + 3:]; out = []; i = 0
                while i < len(s) and s[i].isdigit():
                    j = i
                    while s[j].isdigit(): j += 1
                    n = int(s[i:j]); out.append(s[j:j + n]); i = j + n
                callnames[b].append(out[-1] if out else '?')
    ls = sorted(loops.items(), key=lambda kv: -len(kv[1]))
    main_h, main = ls[0]
    print(path, 'blocks', len(nodes), 'loops', len(loops), 'main loop blocks', len(main))
    main_exits = collections.Counter(v for u in main for v in succ[u] if v not in main)
    print('  main loop exit targets:', dict(main_exits))
    for h, body in ls[1:]:
        if not body <= main: continue
        ex = [(u, v) for u in body for v in succ[u] if v not in body]
        multi = [(u, v) for u, v in ex if v not in main]
        cs = collections.Counter(c for b in body for c in callnames[b])
        if multi or 'errors' in cs:
            print(f'  loop {h} blocks {len(body)} exits {len(ex)} to-outside-main {len(multi)} calls {dict(cs)}')
analyze(sys.argv[1])

def ipdom_check(path):
    order, blocks, succ = cfg(func_body(path))
    preds = collections.defaultdict(list)
    nodes = list(order)
    for u in nodes:
        for v in succ[u]: preds[v].append(u)
    exits = [n for n in nodes if not succ[n]]
    # post-dominators: pdom(n) = {n} | intersection of pdom(s) over successors
    pdom = {n: set(nodes) for n in nodes}
    for e in exits: pdom[e] = {e}
    changed = True
    while changed:
        changed = False
        for n in reversed(nodes):
            if n in exits: continue
            ss = [pdom[s] for s in succ[n] if s in pdom]
            new = (set.intersection(*ss) if ss else set()) | {n}
            if new != pdom[n]: pdom[n] = new; changed = True
    # dominators/loops again
    dom = {n: set(nodes) for n in nodes}; dom['ENTRY'] = {'ENTRY'}
    changed = True
    while changed:
        changed = False
        for n in nodes[1:]:
            ps = [dom[p] for p in preds[n]]
            new = (set.intersection(*ps) if ps else set()) | {n}
            if new != dom[n]: dom[n] = new; changed = True
    loops = {}
    for u in nodes:
        for v in succ[u]:
            if v in dom[u]:
                body = {v}; st = [u]
                while st:
                    x = st.pop()
                    if x in body: continue
                    body.add(x); st += preds[x]
                loops.setdefault(v, set()).update(body)
    ls = sorted(loops.items(), key=lambda kv: -len(kv[1]))
    main = ls[0][1]
    # every conditional branch inside the main loop whose immediate post-dominator lies
    # outside it (threads diverging there reconverge only at the loop's end)
    def ipdom(n):
        cands = pdom[n] - {n}
        for c in cands:
            if all(c in pdom[d] or d == c for d in cands):   # c post-dominated by all others? pick closest
                pass
        # closest: the candidate that every other candidate post-dominates
        best = [c for c in cands if all(o in pdom[c] for o in cands)]
        return best[0] if best else None
    bad = []
    for n in nodes:
        if n in main and len(set(succ[n])) == 2:
            p = ipdom(n)
            if p is None or p not in main:
                # a branch one of whose sides leaves the main loop directly is expected
                leaves = any(s not in main for s in succ[n])
                bad.append((n, p, leaves, len(blocks[n])))
    inner = [b for b in bad if not b[2]]
    print(f'  branches in the main loop reconverging only outside it: {len(bad)} '
          f'(of which not themselves a loop exit: {len(inner)})')
    return inner
if len(sys.argv) > 2:
    ipdom_check(sys.argv[1])
