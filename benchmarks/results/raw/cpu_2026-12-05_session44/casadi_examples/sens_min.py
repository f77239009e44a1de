import casadi as ca, numpy as np, warnings
warnings.simplefilter('ignore')
from caspar_backend.casadi import nlpsol
def build(opaque):
    N, h = 40, 0.25
    x = ca.MX.sym('x', 2); u = ca.MX.sym('u')
    rhs = ca.vertcat((1 - x[1]**2) * x[0] - x[1] + u, x[0])
    f = ca.Function('f', [x, u], [rhs, x[0]**2 + x[1]**2 + u**2])
    P = ca.MX.sym('P', 2)
    X0 = ca.MX.sym('X0', 2)
    w, lbw, ubw, w0, g = [X0], [0, 1], [0, 1], [0, 1], []
    Xk = X0 + P; J = 0
    for k in range(N):
        U = ca.MX.sym(f'U{k}'); w += [U]; lbw += [-1]; ubw += [0.85]; w0 += [0]
        if opaque:
            xd, q = f(Xk, U)
        else:
            xd = ca.vertcat((1 - Xk[1]**2) * Xk[0] - Xk[1] + U, Xk[0]); q = Xk[0]**2 + Xk[1]**2 + U**2
        Xn = ca.MX.sym(f'X{k+1}', 2); w += [Xn]; lbw += [-0.25, -np.inf]; ubw += [np.inf, np.inf]; w0 += [0, 0]
        g += [Xk + h * xd - Xn]; J += h * q; Xk = Xn
    nlp = {'x': ca.vertcat(*w), 'f': J, 'g': ca.vertcat(*g), 'p': P}
    return nlp, dict(x0=w0, lbx=lbw, ubx=ubw, lbg=0, ubg=0)
for opaque in (False, True):
    nlp, a = build(opaque)
    S = nlpsol('S', 'caspar', nlp, {'print_time': 0, 'caspar': {'print_level': 0}})
    sol = S(p=0, **a)
    F = S.forward(1)
    out = []
    for d in range(2):
        fp = np.zeros(2); fp[d] = 1
        r = F(p=0, **a, out_x=sol['x'], out_f=sol['f'], out_g=sol['g'], out_lam_x=sol['lam_x'], out_lam_g=sol['lam_g'], out_lam_p=sol['lam_p'], fwd_p=fp, fwd_lbx=0, fwd_ubx=0, fwd_lbg=0, fwd_ubg=0, fwd_x0=0, fwd_lam_x0=0, fwd_lam_g0=0)
        out.append(float(r['fwd_f']))
    hh = 1e-5
    fd = [(float(S(p=hh*np.eye(2)[d], **a)['f']) - float(S(p=-hh*np.eye(2)[d], **a)['f'])) / (2*hh) for d in range(2)]
    print('opaque', opaque, 'fwd_f', out, '-lam_p', (-np.ravel(sol['lam_p'])).tolist(), 'central FD', fd)
nlp, a = build(False)
S = nlpsol('S', 'caspar', nlp, {'print_time': 0, 'caspar': {'print_level': 0}})
sol = S(p=0, **a)
print(S.stats()['return_status'], float(sol['f']), np.ravel(sol['lam_g'])[:4], np.ravel(sol['lam_p']))
R = ca.nlpsol('R', 'ipopt', nlp, {'print_time': 0, 'ipopt.print_level': 0, 'ipopt.sb': 'yes'})
rs = R(p=0, **a)
print('ipopt', R.stats()['return_status'], float(rs['f']), np.ravel(rs['lam_g'])[:4], np.ravel(rs['lam_p']))
