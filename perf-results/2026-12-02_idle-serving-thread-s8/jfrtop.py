import json,subprocess,sys,collections
# usage: jfrtop.py threadprefix files...
pref=sys.argv[1]
top=collections.Counter(); incl=collections.Counter(); n=0
for f in sys.argv[2:]:
    out=subprocess.run(['jfr','print','--json','--events','jdk.ExecutionSample','--stack-depth','64',f],capture_output=True,text=True).stdout
    for e in json.loads(out)['recording']['events']:
        t=e['values']['sampledThread']
        name=(t.get('javaName') or t.get('osName') or '')
        if not name.startswith(pref): continue
        fr=e['values']['stackTrace']['frames']
        n+=1
        names=[x['method']['type']['name'].split('.')[-1]+'.'+x['method']['name'] for x in fr]
        top[names[0]]+=1
        for m in set(names): incl[m]+=1
print('samples',n)
print('--- top of stack'); [print(c,m) for m,c in top.most_common(25)]
print('--- inclusive'); [print(c,m) for m,c in incl.most_common(45)]
