#!/usr/bin/env python3
"""scalescope ÷ nvbandwidth per cell and round, from scripts/parity-check.sh's parity/ folder:
GB/s as scalescope ÷ nvbandwidth, latency as nvbandwidth ÷ scalescope (above 1.00: scalescope
at least as good). Usage: scripts/parity_table.py DIR (the unpacked results.tar.xz)."""
import json,glob,re,sys
def nvbw(f):
    t=open(f).read(); out={}
    for name,key in [('h2d','memcpy CE CPU(row) -> GPU(column)'),('p2p_read_sm','memcpy SM GPU(row) -> GPU(column)'),('latency_d2d','Device to Device Latency')]:
        i=t.find(key); 
        if i<0: continue
        lines=t[i:].split('\n')[2:4]
        if name=='h2d':
            v=lines[0].split()[1:]; out[(name,'host','0')]=float(v[0]); out[(name,'host','1')]=float(v[1])
        else:
            r0=lines[0].split(); r1=lines[1].split()
            out[(name,'0','1')]=float(r0[2]); out[(name,'1','0')]=float(r1[1])
    return out
def ours(f):
    d=json.load(open(f)); out={}
    for r in d['results']:
        v=r['latency_ns'] if r['test'].startswith('latency') else r['median_gbps']
        out[(r['test'],r['src'],r['dst'])]=v
    return out
d=sys.argv[1]
rounds=sorted(int(re.search(r'nvbw-(\d+)',f).group(1)) for f in glob.glob(f'{d}/parity/nvbw-*.txt'))
for r in rounds:
    n=nvbw(f'{d}/parity/nvbw-{r}.txt')
    for f in sorted(glob.glob(f'{d}/parity/ours-{r}-*.json')):
        o=ours(f); var=open(f.replace('.json','.variant')).read().strip() or 'defaults'
        cells=[]
        for k in sorted(n):
            if k in o and o[k]:
                ratio = n[k]/o[k] if k[0].startswith('latency') else o[k]/n[k]
                cells.append(f"{k[0]} {k[1]}→{k[2]}: {o[k]:.2f} vs {n[k]:.2f} = {ratio:.4f}")
        print(f"round {r} [{var}]"); print("  "+"\n  ".join(cells))
