"""How the Kolakowski recordings' RSSI varies over space and time (docs/simulator.md, Radio).

usage: python3 scripts/analyse-shadowing.py DATA_DIR [calib|robot]
DATA_DIR holds kolakowski-calib/, kolakowski-robot/ and kolakowski-original/ (the shared
real dataset, CC BY 4.0, M. Kolakowski). Needs numpy. Fits log-distance + per-anchor offset
+ walls counted on the room polygons, then prints the spread of 1-s mean residuals and
their correlation by distance apart and, for the same spot, by time apart.
"""
import json,gzip,math,bisect,sys,csv
import statistics as st
import numpy as np
root=sys.argv[1].rstrip('/')+'/'
name=sys.argv[2] if len(sys.argv)>2 else 'calib'
lab={'calib':'room_labels_derived__calibration_df.csv','robot':'room_labels_derived__test_robot_df.csv'}[name]
pos=[]
for i,l in enumerate(open(root+'kolakowski-original/'+lab)):
    if i==0: continue
    p=l.strip().split(',')
    pos.append((float(p[1])/1e9,float(p[2]),float(p[3])))
pos.sort()
pt=np.array([p[0] for p in pos]); px=np.array([p[1] for p in pos]); py=np.array([p[2] for p in pos])
lay=json.load(open(root+f'kolakowski-{name}/layout.json'))
anch={n['name']:(n['x'],n['y'],n['z']) for n in lay['nodes']}
rooms=[(r['name'],r['polygon']) for r in lay['rooms']]
def inside(poly,x,y):
    c=False;n=len(poly)
    for i in range(n):
        x1,y1=poly[i];x2,y2=poly[(i+1)%n]
        if (y1>y)!=(y2>y) and x<x1+(y-y1)*(x2-x1)/(y2-y1): c=not c
    return c
def roomat(x,y):
    for k,(nm,p) in enumerate(rooms):
        if inside(p,x,y): return k
    return None
wc={}
def walls(x,y,node):
    key=(round(x,1),round(y,1),node)
    if key in wc: return wc[key]
    a=anch[node]; n=40; last=None; c=0
    for s in range(n+1):
        f=s/n; r=roomat(x+f*(a[0]-x),y+f*(a[1]-y))
        if r is None: continue
        if last is not None and r!=last: c+=1
        last=r
    wc[key]=c; return c
rows=[json.loads(l) for l in gzip.open(root+f'kolakowski-{name}/raw.jsonl.gz')]
T=[];N=[];R=[];D=[];W=[];X=[];Y=[]
for r in rows:
    t=r['t']; i=bisect.bisect_left(pt,t)
    if i==0 or i>=len(pt) or pt[i]-pt[i-1]>2: continue
    f=(t-pt[i-1])/(pt[i]-pt[i-1]); x=px[i-1]+f*(px[i]-px[i-1]); y=py[i-1]+f*(py[i]-py[i-1])
    a=anch[r['node']]; d=math.sqrt((a[0]-x)**2+(a[1]-y)**2+(a[2]-1.3)**2)
    T.append(t);N.append(r['node']);R.append(r['rssi']);D.append(d);W.append(walls(x,y,r['node']));X.append(x);Y.append(y)
T=np.array(T);R=np.array(R,float);D=np.array(D);W=np.array(W,float);X=np.array(X);Y=np.array(Y);Narr=np.array(N)
nodes=sorted(anch)
A=np.zeros((len(R),3+len(nodes)-1))
A[:,0]=1;A[:,1]=-10*np.log10(D);A[:,2]=-W
for k,n in enumerate(nodes[1:]): A[:,3+k]=(Narr==n)
coef,*_=np.linalg.lstsq(A,R,rcond=None)
res=R-A@coef
print(name,'n=%.2f wall=%.1f dB'%(coef[1],coef[2]),'offsets',np.round(coef[3:],1),'packet resid sd %.2f'%res.std(), 'wall counts',np.bincount(W.astype(int)))
# 1-s means per node with position
allm=[]
for n in nodes:
    m=Narr==n; t=T[m]; r=res[m]; x=X[m]; y=Y[m]
    b=np.floor(t).astype(int); ub,inv=np.unique(b,return_inverse=True)
    c=np.bincount(inv); mean=np.bincount(inv,r)/c; mx=np.bincount(inv,x)/c; my=np.bincount(inv,y)/c
    ok=c>=3
    allm.append((n,ub[ok],mean[ok],mx[ok],my[ok]))
sd=np.concatenate([a[2] for a in allm]).std()
print('1-s mean residual sd %.2f'%sd)
# pairs: spatial distance bins x time-lag classes
bins=[0,0.15,0.3,0.6,1.0,1.5,2.5,4]
for cls,(lo,hi) in {'lag<60s':(0,60),'lag>600s':(600,1e9)}.items():
    out=[]
    for bi in range(len(bins)-1):
        xs=[];ys=[]
        for n,t,mv,mx,my in allm:
            idx=np.arange(len(t))
            rng=np.random.default_rng(1); sel=rng.choice(idx,size=min(len(idx),1500),replace=False)
            for i in sel:
                dt=np.abs(t-t[i]); dd=np.hypot(mx-mx[i],my-my[i])
                k=np.where((dt>=max(lo,2))&(dt<hi)&(dd>=bins[bi])&(dd<bins[bi+1]))[0]
                if len(k): j=k[0]; xs.append(mv[i]); ys.append(mv[j])
        if len(xs)>30: out.append('%.2f-%.2fm: r=%.2f (n=%d)'%(bins[bi],bins[bi+1],np.corrcoef(xs,ys)[0,1],len(xs)))
    print(cls,' | '.join(out))
print('same spot (<0.2 m), by lag:')
for lo,hi in [(2,10),(10,30),(30,90),(90,300),(300,900),(900,3000),(3000,1e9)]:
    xs=[];ys=[]
    for n,t,mv,mx,my in allm:
        for i in range(0,len(t),2):
            dt=np.abs(t-t[i]); dd=np.hypot(mx-mx[i],my-my[i])
            k=np.where((dt>=lo)&(dt<hi)&(dd<0.2))[0]
            if len(k): j=k[len(k)//2]; xs.append(mv[i]); ys.append(mv[j])
    if len(xs)>30: print('  lag %d-%d s: r=%.2f n=%d'%(lo,hi,np.corrcoef(xs,ys)[0,1],len(xs)))
# Robot stopped vs moving: spread of 1-s means within 6-s windows, per anchor.
if name == 'calib':
    pk={}
    for r in rows: pk.setdefault(r['node'],[]).append((r['t'],r['rssi']))
    for k in pk: pk[k].sort()
    times={k:[p[0] for p in v] for k,v in pk.items()}
    res={'stopped':[], 'moving':[]}
    for f in ['calib1_df.csv','calib2_df.csv','calib3_df.csv','calib4_df.csv']:
        df=list(csv.DictReader(open(root+'kolakowski-original/calibration/'+f)))
        ts=[float(r['ts'])/1e9 for r in df]; xs=[float(r['x']) for r in df]; ys=[float(r['y']) for r in df]
        t=ts[0]
        while t+6<ts[-1]:
            a=bisect.bisect_left(ts,t); b=bisect.bisect_left(ts,t+6)
            path=sum(math.hypot(xs[k+1]-xs[k],ys[k+1]-ys[k]) for k in range(a,b-1))
            cls='stopped' if path<0.1 else ('moving' if path>0.3 else None)
            if cls:
                for node,lst in pk.items():
                    tt=times[node]
                    vals=lst[bisect.bisect_left(tt,t):bisect.bisect_left(tt,t+6)]
                    means=[st.mean(v) for v in ([r for (u,r) in vals if t+s<=u<t+s+1] for s in range(6)) if len(v)>=2]
                    if len(means)>=5: res[cls].append(st.pstdev(means))
            t+=6
    for c in res: print('robot %s: spread of 1-s means within 6 s, median %.2f dB over %d windows'%(c,st.median(res[c]),len(res[c])))
