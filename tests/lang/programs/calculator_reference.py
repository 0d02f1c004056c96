"""calculator_reference.py — an independent evaluator of calculator.tl's lines, in Python.
Prints what calculator.tl must print (its .out): python3 calculator_reference.py."""

LINES = ["x = 3 + 4 * 2", "y = (x - 1) / 4", "x ^ 2 - y", "-x + -(-y)", "max(x, y, 20, 7) + sum(1, 2, 3)",
         "twice(x) * count(1, 1, 1)", "z = 2 ^ 3 ^ 2 / 64", "z * 0.25 + 1.5", "q + 1", "1 / (x - 11)",
         "3 + ", "(1 + 2", "4 $ 2", "sqrt(4)", "y = y * 10", "sum(x, y, z) / count(x, y, z)"]


class Err(Exception):
    pass


def tokenize(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == ' ':
            i += 1
        elif c.isdigit():
            v = 0.0
            while i < len(s) and s[i].isdigit():
                v = v * 10.0 + (ord(s[i]) - 48)
                i += 1
            if i < len(s) and s[i] == '.':
                i += 1
                scale = 0.1
                while i < len(s) and s[i].isdigit():
                    v += (ord(s[i]) - 48) * scale
                    scale = scale / 10.0
                    i += 1
            out.append(('num', v))
        elif c.isalpha() or c == '_':
            j = i
            while i < len(s) and (s[i].isalnum() or s[i] == '_'):
                i += 1
            out.append(('id', s[j:i]))
        elif c in '+-*/^':
            out.append(('op', c)); i += 1
        elif c in '(),=':
            out.append((c, None)); i += 1
        else:
            raise Err("unexpected '%s' at column %d" % (c, i + 1))
    return out


class Parser:
    def __init__(self, toks, pos):
        self.t, self.pos = toks, pos

    def peek_op(self):
        return self.t[self.pos][1] if self.pos < len(self.t) and self.t[self.pos][0] == 'op' else ' '

    def at_end(self):
        return self.pos >= len(self.t)

    def expr(self):
        left = self.term()
        while self.peek_op() in '+-' and self.peek_op() != ' ':
            op = self.peek_op(); self.pos += 1
            left = ('bin', op, left, self.term())
        return left

    def term(self):
        left = self.power()
        while self.peek_op() in '*/' and self.peek_op() != ' ':
            op = self.peek_op(); self.pos += 1
            left = ('bin', op, left, self.power())
        return left

    def power(self):
        base = self.unary()
        if self.peek_op() == '^':
            self.pos += 1
            return ('bin', '^', base, self.power())
        return base

    def unary(self):
        if self.peek_op() == '-':
            self.pos += 1
            return ('neg', self.unary())
        return self.atom()

    def atom(self):
        if self.at_end():
            raise Err("unexpected end of input")
        kind, val = self.t[self.pos]
        self.pos += 1
        if kind == 'num':
            return ('num', val)
        if kind == 'id':
            if not self.at_end() and self.t[self.pos][0] == '(':
                self.pos += 1
                args = []
                while True:
                    args.append(self.expr())
                    if self.at_end():
                        raise Err("missing ')' after the arguments of %s" % val)
                    k = self.t[self.pos][0]
                    self.pos += 1
                    if k == ',':
                        continue
                    if k == ')':
                        break
                    raise Err("expected ',' or ')' in the call of %s" % val)
                return ('call', val, args)
            return ('var', val)
        if kind == '(':
            inner = self.expr()
            if self.at_end() or self.t[self.pos][0] != ')':
                raise Err("missing ')'")
            self.pos += 1
            return inner
        raise Err("unexpected token at position %d" % self.pos)


def power(b, e):
    r, k = 1.0, 0
    while k < int(e):
        r = r * b; k += 1
    return r


scale = 2.0
FUNCS = {"sum": lambda xs: sum(xs, 0.0), "max": lambda xs: max(xs), "twice": lambda xs: xs[0] * scale,
         "count": lambda xs: float(len(xs))}


def ev(e, vars):
    k = e[0]
    if k == 'num':
        return e[1]
    if k == 'var':
        if e[1] not in vars:
            raise Err("unknown variable %s" % e[1])
        return vars[e[1]]
    if k == 'neg':
        return -ev(e[1], vars)
    if k == 'bin':
        a, b = ev(e[2], vars), ev(e[3], vars)
        op = e[1]
        if op == '+': return a + b
        if op == '-': return a - b
        if op == '*': return a * b
        if op == '/':
            if b == 0.0:
                raise Err("division by zero")
            return a / b
        return power(a, b)
    if e[1] not in FUNCS:
        raise Err("unknown function %s" % e[1])
    return FUNCS[e[1]]([ev(a, vars) for a in e[2]])


def run_line(line, vars):
    toks = tokenize(line)
    target, start = "", 0
    if len(toks) >= 2 and toks[1][0] == '=' and toks[0][0] == 'id':
        target, start = toks[0][1], 2
    p = Parser(toks, start)
    e = p.expr()
    if not p.at_end():
        raise Err("trailing input at token %d" % (p.pos + 1))
    return target, ev(e, vars)


vars, ok, failed = {}, 0, []
for n, line in enumerate(LINES):
    try:
        name, v = run_line(line, vars)
        ok += 1
        if name:
            vars[name] = v
            print("%d: %s = %r" % (n + 1, name, v))
        else:
            print("%d: %r" % (n + 1, v))
    except Err as m:
        print("%d: error: %s" % (n + 1, m))
        failed.append(line)
print("%d ok, %d failed; variables [%s]" % (ok, len(failed), ", ".join('"%s"' % k for k in vars)))
print("twice the variables above 1: %r" % sum(v * 2.0 for v in vars.values() if v > 1.0))
