# Session 23: checks the index arithmetic of kernel_templates/gemv_mma.cuh without a GPU: every
# block, warp and lane as the kernel computes them (A staged as fragments, B loaded as quads, C
# emitted as quads), the mma by its PTX m16n8k8 fragment layout, exact arithmetic (no tf32
# rounding). Prints the largest error against a direct sum and whether the padding stayed.
# Python emulation of kernel_templates/gemv_mma.cuh (exact arithmetic, no tf32 rounding):
# every block, warp and lane as the kernel computes them, the mma by its PTX fragment layout.
import random, itertools
def run(M,N,K,op_a,WARPS,LW,KB,alpha,beta,ldb_pad,ldc_pad):
    random.seed(M*7+N*3+K)
    lda = (K if op_a==0 else M)
    Ast = [random.uniform(-1,1) for _ in range((M if op_a==0 else K)*lda)]
    ldb = N+ldb_pad; ldc = N+ldc_pad
    Bst = [random.uniform(-1,1) for _ in range(K*ldb)]
    C0 = [random.uniform(-1,1) for _ in range(M*ldc)]
    C = list(C0)
    def Aop(r,k): return Ast[r*lda+k] if op_a==0 else Ast[k*lda+r]
    ref = {(i,j): alpha*sum(Aop(i,k)*Bst[k*ldb+j] for k in range(K)) + beta*C0[i*ldc+j] for i in range(M) for j in range(N)}
    TILE_N = 32*WARPS*LW; STEPS = KB//8
    slices = (K+KB-1)//KB if K>KB else 1
    strips = max(1,(N+TILE_N-1)//TILE_N)
    if slices>1:  # prepare_c
        for i in range(M):
            for j in range(N): C[i*ldc+j] = 0.0 if beta==0 else beta*C[i*ldc+j]
    for by in range(slices):
        for bx in range(strips):
            k_begin = by*KB; k_end = min(K, k_begin+KB)
            def a_at(row,k): return 0.0 if row>=M or k>=k_end else Aop(row,k)
            frag = {}
            for idx in range(STEPS*32):
                s=idx>>5; g=(idx&31)>>2; t=idx&3; k=k_begin+8*s+t
                frag[idx]=[a_at(g,k),a_at(g+8,k),a_at(g,k+4),a_at(g+8,k+4)]
            steps = min(STEPS,(k_end-k_begin+7)//8)
            for w in range(WARPS):
                warp_n = bx*TILE_N + w*32*LW
                acc = [[[[0.0]*4 for q in range(4)] for j in range(LW)] for l in range(32)]
                def b_quad(k,col):
                    if k>=k_end or col>=N: return [0.0]*4
                    return [Bst[k*ldb+col+q] if col+q<N else 0.0 for q in range(4)]
                for s in range(steps):
                    # each lane's loads
                    x = [[[b_quad(k_begin+8*s+(l&3)+4*h, warp_n+32*j+4*(l>>2)) for h in range(2)] for j in range(LW)] for l in range(32)]
                    a = [frag[s*32+l] for l in range(32)]
                    for j in range(LW):
                        for q in range(4):
                            Af=[[0.0]*8 for _ in range(16)]; Bf=[[0.0]*8 for _ in range(8)]
                            for l in range(32):
                                g,t=l>>2,l&3
                                Af[g][t],Af[g+8][t],Af[g][t+4],Af[g+8][t+4]=a[l]
                                Bf[t][g]=x[l][j][0][q]; Bf[t+4][g]=x[l][j][1][q]
                            for l in range(32):
                                g,t=l>>2,l&3
                                for e,(r,cc) in enumerate([(g,2*t),(g,2*t+1),(g+8,2*t),(g+8,2*t+1)]):
                                    acc[l][j][q][e]+=sum(Af[r][kk]*Bf[kk][cc] for kk in range(8))
                for l in range(32):
                    g,t=l>>2,l&3
                    for j in range(LW):
                        for e in range(4):
                            row=g+8*(e>>1); col=warp_n+32*j+8*t+4*(e&1)
                            if row>=M or col>=N: continue
                            v=[acc[l][j][q][e] for q in range(4)]
                            for q in range(4):
                                if col+q>=N: break
                                if slices==1:
                                    C[row*ldc+col+q] = alpha*v[q] + (beta*C[row*ldc+col+q] if beta!=0 else 0.0)
                                else:
                                    C[row*ldc+col+q] += alpha*v[q]
    err = max(abs(C[i*ldc+j]-ref[(i,j)]) for i in range(M) for j in range(N))
    pad_ok = all(C[i*ldc+j]==C0[i*ldc+j] for i in range(M) for j in range(N,ldc))
    return err, pad_ok
for case in [(16,64,40,0,2,1,16,1.25,0.5,0,0),(5,129,70,1,1,2,32,1.0,0.0,3,3),(1,37,1,0,2,1,16,1.25,-1.0,3,3),(16,200,33,1,4,1,16,1.0,0.5,0,4),(3,100,200,0,1,4,64,0.5,0.0,0,0)]:
    print(case, run(*case))
