# Session 23: checks the index arithmetic of kernel_templates/gemv_mma.cuh without a GPU: both
# small sides in every layout (both loops), every block, warp and lane as the kernel computes
# them (W staged as fragments in the loop's K order, X loaded as quads, C emitted), the mma by
# its PTX m16n8k8 fragment layout, exact arithmetic (no tf32 rounding). Prints, per case, the
# largest error against a direct sum and whether the padding past N stayed.
import random
def mma(afr, bfr):  # afr[lane]=[a0..a3], bfr[lane]=(b0,b1) -> dfr[lane]=[d0..d3]
    Af=[[0.0]*8 for _ in range(16)]; Bf=[[0.0]*8 for _ in range(8)]
    for l in range(32):
        g,t=l>>2,l&3
        Af[g][t],Af[g+8][t],Af[g][t+4],Af[g+8][t+4]=afr[l]
        Bf[t][g],Bf[t+4][g]=bfr[l]
    out=[]
    for l in range(32):
        g,t=l>>2,l&3
        out.append([sum(Af[r][k]*Bf[k][c] for k in range(8)) for r,c in [(g,2*t),(g,2*t+1),(g+8,2*t),(g+8,2*t+1)]])
    return out
def run(M,N,K,op_a,op_b,SIDE,WARPS,LW,KB,alpha,beta,pad):
    random.seed(M*7+N*3+K+op_a+2*op_b)
    a_rows,a_cols=(M,K) if op_a==0 else (K,M)
    b_rows,b_cols=(K,N) if op_b==0 else (N,K)
    lda,ldb,ldc=a_cols+pad,b_cols+pad,N+pad
    Ast=[random.uniform(-1,1) for _ in range(a_rows*lda)]
    Bst=[random.uniform(-1,1) for _ in range(b_rows*ldb)]
    C0=[random.uniform(-1,1) for _ in range(M*ldc)]
    C=list(C0)
    Aop=lambda i,k: Ast[i*lda+k] if op_a==0 else Ast[k*lda+i]
    Bop=lambda k,j: Bst[k*ldb+j] if op_b==0 else Bst[j*ldb+k]
    ref={(i,j):alpha*sum(Aop(i,k)*Bop(k,j) for k in range(K))+beta*C0[i*ldc+j] for i in range(M) for j in range(N)}
    # view
    if SIDE==0: XK=op_b; WK=1-op_a; x,w,ldx,ldw,S,L=Bst,Ast,ldb,lda,M,N
    else: XK=1-op_a; WK=op_b; x,w,ldx,ldw,S,L=Ast,Bst,lda,ldb,N,M
    LPW=8*LW if XK else 32*LW; TILE_L=WARPS*LPW; STEPS=KB//8
    slices=(K+KB-1)//KB if K>KB else 1; strips=max(1,(L+TILE_L-1)//TILE_L)
    def caddr(s,l): return s*ldc+l if SIDE==0 else l*ldc+s
    if slices>1:
        for i in range(M):
            for j in range(N): C[i*ldc+j]=0.0 if beta==0 else beta*C[i*ldc+j]
    for by in range(slices):
      for bx in range(strips):
        kb=by*KB; ke=min(K,kb+KB)
        def w_at(s,k):
            if s>=S or k>=ke: return 0.0
            return w[s*ldw+k] if WK else w[k*ldw+s]
        def k_of(step,t): return kb+32*(step>>2)+16*((step>>1)&1)+4*t+2*(step&1) if XK else kb+8*step+t
        d4=1 if XK else 4
        frag={}
        for idx in range(STEPS*32):
            g=(idx&31)>>2; k=k_of(idx>>5,idx&3); k4=k+d4
            frag[idx]=[w_at(g,k),w_at(g+8,k),w_at(g,k4),w_at(g+8,k4)]
        def x_quad(k,l):
            along,end=(k,ke) if XK else (l,L)
            if k>=ke or l>=L: return [0.0]*4
            base=l*ldx+k if XK else k*ldx+l
            return [x[base+q] if along+q<end else 0.0 for q in range(4)]
        def emit(s,l,val):
            if s>=S or l>=L: return
            a=caddr(s,l)
            if slices==1: C[a]=alpha*val+(beta*C[a] if beta!=0 else 0.0)
            else: C[a]+=alpha*val
        for wp in range(WARPS):
            l_warp=bx*TILE_L+wp*LPW
            if not XK:
                steps=min(STEPS,(ke-kb+7)//8)
                acc=[[[[0.0]*4 for q in range(4)] for j in range(LW)] for l in range(32)]
                for s in range(steps):
                    xs=[[[x_quad(kb+8*s+(l&3)+4*h, l_warp+32*j+4*(l>>2)) for h in range(2)] for j in range(LW)] for l in range(32)]
                    afr=[frag[s*32+l] for l in range(32)]
                    for j in range(LW):
                        for q in range(4):
                            d=mma(afr,[(xs[l][j][0][q],xs[l][j][1][q]) for l in range(32)])
                            for l in range(32):
                                for e in range(4): acc[l][j][q][e]+=d[l][e]
                for l in range(32):
                    g,t=l>>2,l&3
                    for j in range(LW):
                        for e in range(4):
                            for q in range(4): emit(g+8*(e>>1), l_warp+32*j+8*t+4*(e&1)+q, acc[l][j][q][e])
            else:
                chunks=min(KB//32,(ke-kb+31)//32)
                acc=[[[0.0]*4 for j in range(LW)] for l in range(32)]
                for c in range(chunks):
                    xs=[[[x_quad(kb+32*c+16*h+4*(l&3), l_warp+8*j+(l>>2)) for h in range(2)] for j in range(LW)] for l in range(32)]
                    for sub in range(4):
                        s=4*c+sub; h=sub>>1; p2=2*(sub&1)
                        afr=[frag[s*32+l] for l in range(32)]
                        for j in range(LW):
                            d=mma(afr,[(xs[l][j][h][p2],xs[l][j][h][p2+1]) for l in range(32)])
                            for l in range(32):
                                for e in range(4): acc[l][j][e]+=d[l][e]
                for l in range(32):
                    g,t=l>>2,l&3
                    for j in range(LW):
                        for e in range(4): emit(g+8*(e>>1), l_warp+8*j+2*t+(e&1), acc[l][j][e])
    err=max(abs(C[i*ldc+j]-ref[(i,j)]) for i in range(M) for j in range(N))
    pad_ok=all(C[i*ldc+j]==C0[i*ldc+j] for i in range(M) for j in range(N,ldc))
    return err,pad_ok
cases=[]
for SIDE in (0,1):
  for op_a in (0,1):
    for op_b in (0,1):
      small=(5 if SIDE==0 else 16)
      M,N=(small,70) if SIDE==0 else (37,small)
      cases.append((M,N,45,op_a,op_b,SIDE,2,1,32,1.25,0.5,0))
      cases.append((M,N,100,op_a,op_b,SIDE,1,2,64,1.0,0.0,4))
for c in cases:
    e,ok=run(*c); print(c, "%.1e"%e, ok, "FAIL" if e>1e-9 or not ok else "")
