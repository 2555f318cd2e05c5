"""Linear algebra (the library's linalg submodule)."""
from __future__ import annotations

import random

from .common import S, fmat, fvec, iscalar

FL, L2 = "a list of floats", "a 2-D list of floats"
R2 = "return [[float(v) for v in row] for row in {}]"
R1 = "return [float(v) for v in {}]"
TALL = {"r": (4, 6), "c": (2, 3)}
B_K = (fvec(n="k"), "a list of floats with one entry per row of a")


def _maybe_deficient(rng: random.Random, c: dict):
    rows = [[rng.randint(-4, 4) for _ in range(c["c"])] for _ in range(c["r"])]
    if rng.random() < 0.5 and c["r"] >= 3:
        rows[2] = [a + b for a, b in zip(rows[0], rows[1])]
    return rows


SPECS = [
    S("linalg.norm", "x:f", "return float(np.linalg.norm(x))", "returns the Euclidean length of the vector x", "a float"),
    S("linalg.norm", "x:f", "return np.linalg.norm(x)", "computes the 2-norm of x", "a float"),
    S("linalg.norm", "x:f", "return float(np.linalg.norm(x, ord=1))", "returns the sum of absolute values of x (its 1-norm)", "a float"),
    S("linalg.norm", "m:m", "return float(np.linalg.norm(m))", "returns the Frobenius norm of the matrix m", "a float"),
    S("linalg.vector_norm", "x:f", "return float(np.linalg.vector_norm(x))", "returns the Euclidean norm of the vector x", "a float"),
    S("linalg.vector_norm", "x:f", "return float(np.linalg.vector_norm(x, ord=1))", "returns the 1-norm of the vector x", "a float"),
    S("linalg.matrix_norm", "m:m", "return float(np.linalg.matrix_norm(m))", "returns the Frobenius norm of the matrix m", "a float"),
    S("linalg.matrix_norm", "m:m", "return float(np.linalg.matrix_norm(m, ord=1))",
      "returns the 1-norm of the matrix m (the largest absolute column sum)", "a float"),
    S("linalg.det", "a:sq", "return float(np.linalg.det(a))", "returns the determinant of the square matrix a", "a float"),
    S("linalg.det", "a:sq", "return np.linalg.det(a)", "computes the determinant of a", "a float"),
    S("linalg.slogdet", "a:sq", "sign, logdet = np.linalg.slogdet(a)\nreturn [float(sign), float(logdet)]",
      "returns the sign and the natural log of the absolute value of the determinant of a", "a list of two floats"),
    S("linalg.inv", "a:sq", R2.format("np.linalg.inv(a)"), "returns the inverse of the square matrix a", L2),
    S("linalg.pinv", "a:m", R2.format("np.linalg.pinv(a)"), "returns the Moore-Penrose pseudo-inverse of the matrix a", L2, sizes=TALL),
    S("linalg.solve", "a:sq, b:f", R1.format("np.linalg.solve(a, b)"), "solves the linear system a @ x = b for x", FL, b=B_K),
    S("linalg.lstsq", "a:m, b:f", "sol, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)\n" + R1.format("sol"),
      "returns the least-squares solution x minimising |a @ x - b|", FL, sizes=TALL,
      b=(fvec(n="r"), "a list of floats with one entry per row of a")),
    S("linalg.tensorinv", "a:sq", R2.format("np.linalg.tensorinv(a, ind=1)"), "returns the tensor inverse of a (with ind=1, its matrix inverse)", L2),
    S("linalg.tensorsolve", "a:sq, b:f", R1.format("np.linalg.tensorsolve(a, b)"), "solves the tensor equation a x = b for x", FL, b=B_K),
    S("linalg.eig", "a:sym", "vals, vecs = np.linalg.eig(a)\nreturn sorted(round(float(v), 6) for v in vals)",
      "returns the eigenvalues of the symmetric matrix a in ascending order, rounded to 6 decimals", FL),
    S("linalg.eigh", "a:sym", "vals, vecs = np.linalg.eigh(a)\n" + R1.format("vals"),
      "returns the eigenvalues of the symmetric matrix a in ascending order", FL),
    S("linalg.eigvals", "a:sym", "return sorted(round(float(v), 6) for v in np.linalg.eigvals(a))",
      "returns the eigenvalues of the symmetric matrix a sorted ascending, rounded to 6 decimals", FL),
    S("linalg.eigvalsh", "a:sym", R1.format("np.linalg.eigvalsh(a)"), "returns the eigenvalues of the symmetric matrix a, smallest first", FL),
    S("linalg.eigvalsh", "a:sym", "return np.linalg.eigvalsh(a)", "computes the ascending eigenvalues of the symmetric matrix a", "an array of floats"),
    S("linalg.svd", "a:m", "u, s, vt = np.linalg.svd(a)\n" + R1.format("s"), "returns the singular values of a, largest first", FL),
    S("linalg.svdvals", "a:m", R1.format("np.linalg.svdvals(a)"), "returns the singular values of the matrix a in descending order", FL),
    S("linalg.qr", "a:sq", "q, r = np.linalg.qr(a)\nreturn [abs(float(r[i][i])) for i in range(len(r))]",
      "computes the QR decomposition of a and returns the absolute values of the diagonal of R", FL),
    S("linalg.cholesky", "a:spd", R2.format("np.linalg.cholesky(a)"),
      "returns the lower-triangular Cholesky factor L of the symmetric positive-definite matrix a (a = L @ L.T)", L2),
    S("linalg.cond", "a:sq", "return float(np.linalg.cond(a))", "returns the 2-norm condition number of a", "a float"),
    S("linalg.matrix_rank", "a:mi", "return int(np.linalg.matrix_rank(a))", "returns the rank of the matrix a", "an integer",
      sizes={"r": (3, 4), "c": (2, 4)}, a=(_maybe_deficient, "a 2-D list of integers")),
    S("linalg.matrix_power", "a:mi, p:k", "return [[int(v) for v in row] for row in np.linalg.matrix_power(a, p)]",
      "raises the square integer matrix a to the power p (p = 0 gives the identity)", "a 2-D list of integers",
      a=(lambda rng, c: [[rng.randint(-2, 2) for _ in range(c["k"])] for _ in range(c["k"])], "a square 2-D list of integers"),
      p=(iscalar(0, 4), "a non-negative integer")),
    S("linalg.matrix_transpose", "m:m", R2.format("np.linalg.matrix_transpose(m)"), "returns the transpose of the matrix m", L2),
    S("linalg.multi_dot", "a:m, b:m, c:m", R2.format("np.linalg.multi_dot([a, b, c])"),
      "returns the chained matrix product a @ b @ c", L2,
      b=(fmat(r="c", cols="k"), "a 2-D list of floats"), c=(fmat(r="k", cols="r"), "a 2-D list of floats")),
    S("linalg.cross", "a:v3, b:v3", R1.format("np.linalg.cross(a, b)"), "returns the cross product of the 3-D vectors a and b", FL),
    S("linalg.outer", "x:f, y:f", R2.format("np.linalg.outer(x, y)"), "returns the outer product of x and y", L2, y=(fvec(n="k"), FL)),
    S("linalg.diagonal", "m:m", R1.format("np.linalg.diagonal(m)"), "returns the main diagonal of m", FL),
    S("linalg.trace", "m:sq", "return float(np.linalg.trace(m))", "returns the trace (sum of the diagonal) of m", "a float"),
    S("linalg.tensordot", "a:m, b:m", R2.format("np.linalg.tensordot(a, b, axes=1)"),
      "contracts the last axis of a with the first axis of b", L2,
      b=(fmat(r="c", cols="k"), "a 2-D list of floats whose row count equals the column count of a")),
    S("linalg.matmul", "a:m, b:m", R2.format("np.linalg.matmul(a, b)"), "returns the matrix product of a and b", L2,
      b=(fmat(r="c", cols="k"), "a 2-D list of floats whose row count equals the column count of a")),
    S("linalg.vecdot", "x:f, y:f", "return float(np.linalg.vecdot(x, y))", "returns the vector dot product of x and y", "a float"),
]
