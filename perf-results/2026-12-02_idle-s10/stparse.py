#!/usr/bin/env python3
# Parse strace -tt -T -xx output of one duty thread: wake-ups by cause and datagrams by type.
import re, sys, collections
tid = sys.argv[2]
lines = [l if re.match(r'\d+\s+\d+:', l) else tid + ' ' + l for l in open(sys.argv[1])]
lines = [l for l in lines if l.startswith(tid + ' ')]
# join unfinished/resumed
ev = []
pending = None
for l in lines:
    m = re.match(r'(\d+)\s+(\d+):(\d+):([\d.]+)\s+(.*)', l)
    t = int(m.group(2))*3600 + int(m.group(3))*60 + float(m.group(4))
    body = m.group(5)
    if body.endswith('<unfinished ...>'):
        pending = (t, body[:-len('<unfinished ...>')]); continue
    if body.startswith('<... '):
        rm = re.match(r'<\.\.\. (\w+) resumed>(.*)', body)
        if pending: body = pending[1] + rm.group(2); t = pending[0]
        pending = None
    ev.append((t, body))
T = ev[-1][0] - ev[0][0]
TYPES = {0: 'PAD', 1: 'DATA', 2: 'NAK', 3: 'SM', 4: 'ERR', 5: 'SETUP', 6: 'RTTM', 7: 'RES'}
def ftype(hexs):
    b = bytes(int(x, 16) for x in re.findall(r'\\x([0-9a-f]{2})', hexs)[:32])
    if len(b) < 8: return '?'
    flen = int.from_bytes(b[0:4], 'little'); ty = int.from_bytes(b[6:8], 'little')
    name = TYPES.get(ty, str(ty))
    if name == 'DATA': name = 'DATA-hb' if flen == 0 else 'DATA(%d)' % flen
    return name
wakes = collections.Counter(); rx = collections.Counter(); tx = collections.Counter()
cyc_after = collections.Counter()
epoll_fd_wakes = collections.Counter()
for t, b in ev:
    if b.startswith('epoll_wait') and re.search(r', 0\)\s*=', b):
        wakes['(selectNow, not a wake-up)'] += 1
        continue
    if b.startswith('epoll_wait'):
        m = re.search(r'\)\s*=\s*(-?\d+)', b)
        n = int(m.group(1)) if m else -1
        if n == 0:
            to = re.search(r', (\d+)\)\s*=', b)
            wakes['epoll timeout %s ms' % (to.group(1) if to else '?')] += 1
        else:
            fds = re.findall(r'u32=(\d+)', b)
            wakes['epoll ready'] += 1
            epoll_fd_wakes[','.join(sorted(set(fds)))] += 1
    elif b.startswith('futex') and 'FUTEX_WAIT' in b:
        if 'ETIMEDOUT' in b: wakes['park timeout'] += 1
        else: wakes['park woken'] += 1
    elif b.startswith('recvfrom') and 'EAGAIN' not in b:
        fd = re.match(r'recvfrom\((\d+)', b).group(1)
        rx['fd%s %s' % (fd, ftype(b))] += 1
    elif b.startswith('sendto'):
        fd = re.match(r'sendto\((\d+)', b).group(1)
        tx['fd%s %s' % (fd, ftype(b))] += 1
print('window %.1f s, thread %s' % (T, tid))
print('wake-ups/s:'); [print('  %-28s %6.1f' % (k, v / T)) for k, v in sorted(wakes.items())]
print('  total %.1f' % (sum(v for k, v in wakes.items() if not k.startswith('(')) / T))
print('epoll ready by fd/s:'); [print('  %-28s %6.1f' % (k, v / T)) for k, v in sorted(epoll_fd_wakes.items())]
print('received/s:'); [print('  %-28s %6.1f' % (k, v / T)) for k, v in sorted(rx.items())]
print('sent/s:'); [print('  %-28s %6.1f' % (k, v / T)) for k, v in sorted(tx.items())]
