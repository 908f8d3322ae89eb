//! The report's script (after the pages' grid-and-tree linking script): it
//! draws the timeline from its data and redraws it zoomed, and fills the
//! frame viewer from the embedded frame data when a `#frame-N` link opens a
//! frame. When it has drawn the page it sets `data-ready-ms` on the body
//! (milliseconds since the page started loading): the browser test reads it.

pub(crate) const SCRIPT: &str = r##"
(()=>{const box=document.getElementById('tl'),src=document.getElementById('tl-data');if(!box||!src)return;
const D=JSON.parse(src.textContent),NS='http://www.w3.org/2000/svg',L=D.lanes.length,LH=L>40?11:18,LW=260,AX=26;
const W=Math.max(900,box.clientWidth-4),PW=W-LW-12,H=AX+L*LH+4,full=Math.max(D.span_ms,0.001),MIN=Math.min(full,0.01);let v0=0,v1=full,dragged=false,from=null,sel=null;
const fmt=ms=>ms<0.01?(ms*1000).toFixed(0)+' µs':ms<1?ms.toFixed(2)+' ms':ms<999.95?ms.toFixed(1)+' ms':(ms/1000).toFixed(1)+' s';
const nice=r=>{const p=Math.pow(10,Math.floor(Math.log10(r))),f=r/p;return(f<1.5?1:f<3.5?2:f<7.5?5:10)*p};
const dec=x=>Math.max(0,-Math.floor(Math.log10(x)+1e-9));
const label=(t,s)=>{const u=v1>=1000?1000:v1>=1?1:0.001;return '+'+(t/u).toFixed(dec(s/u))+(u===1000?' s':u===1?' ms':' µs')};
const el=(n,a,p)=>{const e=document.createElementNS(NS,n);for(const k in a)e.setAttribute(k,a[k]);if(p)p.appendChild(e);return e};
const text=(n,a,p,s)=>{const e=el(n,a,p);e.textContent=s;return e};
const draw=()=>{const svg=el('svg',{width:W,height:H,class:'timeline','aria-label':'timeline of every connection'}),x=t=>LW+(t-v0)/(v1-v0)*PW;
D.lanes.forEach(([c,lab],i)=>{const y=AX+i*LH;if(i%2===0)el('rect',{x:0,y,width:W,height:LH,class:'lane'},svg);const fs=LH>12?11:9,most=Math.floor((LW-10)/(fs*0.6)),full='conn '+c+': '+lab,t=text('text',{x:4,y:y+LH-(LH>12?5:2),'font-size':fs},svg,full.length>most?full.slice(0,most-1)+'…':full);text('title',{},t,full)});
const step=nice((v1-v0)/8);for(let i=Math.ceil(v0/step),k=0;i*step<=v1+step*1e-6&&k<40;i++,k++){const t=i*step,xt=x(t);el('line',{x1:xt,y1:AX-6,x2:xt,y2:H,stroke:'#e0e0e0'},svg);text('text',{x:xt,y:AX-10,'text-anchor':xt>W-40?'end':'middle',class:'tick'},svg,label(t,step))}
const open=[],lanes=D.lanes.map(()=>[]),paths=new Map(),labels=[];let marks=0;
const flush=l=>{const b=open[l];if(!b)return;open[l]=null;const y=AX+b.l*LH+2,h=LH-4,api=b.a>=0?D.apis[b.a]:['(no request)','#999'],w=Math.max(1.5,b.xb-b.xa),key=(b.k===2?'#fff':api[1])+' '+b.k;
paths.set(key,(paths.get(key)||'')+'M'+b.xa.toFixed(1)+' '+y+'h'+w.toFixed(1)+'v'+h+'h'+(-w).toFixed(1)+'z');
if(h>=10&&w>api[0].length*6+8)labels.push([b.xa+3,y+h-3,api[0]]);lanes[l].push(b);marks++};
let n=0;const B=D.bars;for(let i=0;i<B.length;i++){const q=B[i],l=q[0],s=q[1],e=q[2],a=q[3],k=q[4],f=q[5],err=q[6];if(e<v0||s>v1)continue;n++;const xa=Math.max(LW,x(s)),xb=Math.min(LW+PW,x(e)),b=open[l];
if(b&&b.a===a&&b.k===k&&xa<=b.xb+1&&(b.err||'')===(err||'')){b.xb=Math.max(b.xb,xb);b.e=Math.max(b.e,e);b.n++;continue}
flush(l);open[l]={l,s,e,a,k,f,err,xa,xb,n:1}}
for(let l=0;l<L;l++)flush(l);
// One path per colour and outline: tens of elements however many exchanges, so a page of 20,000 draws at once; the mouse finds its mark by lane and x.
for(const[key,d]of paths){const[fill,k]=key.split(' '),p=el('path',{d,fill,class:'bar'},svg);if(k==='1'||k==='2'){p.setAttribute('stroke','#c62828');p.setAttribute('stroke-width',k==='1'?2:1.5);if(k==='2')p.setAttribute('stroke-dasharray','3 2')}}
for(const[lx,ly,s]of labels)text('text',{x:lx,y:ly,'font-size':10,'pointer-events':'none'},svg,s);
box.replaceChildren(svg);svg.dataset.bars=n;svg.dataset.marks=marks;document.getElementById('tl-range').textContent='+'+fmt(v0)+' to +'+fmt(v1)+', '+n+' exchanges drawn';
const tip=document.getElementById('tl-tip'),mark=ev=>{const r=svg.getBoundingClientRect(),px=ev.clientX-r.left,l=Math.floor((ev.clientY-r.top-AX)/LH),row=lanes[l];if(!row||px<LW)return null;
let lo=0,hi=row.length-1;while(lo<hi){const m=(lo+hi+1)>>1;if(row[m].xa<=px)lo=m;else hi=m-1}const b=row[lo];return b&&b.xa-1<=px&&px<=b.xa+Math.max(1.5,b.xb-b.xa)+1?b:null};
svg.addEventListener('mousemove',ev=>{if(from!==null)return;const b=mark(ev);svg.style.cursor=b?'pointer':'';if(!b){tip.hidden=true;return}const api=b.a>=0?D.apis[b.a][0]:'(no request)';
tip.textContent=(b.n>1?b.n+' exchanges, '+api+' from +'+fmt(b.s)+' to +'+fmt(b.e):api+' at +'+fmt(b.s)+' · '+(b.k===2?'never answered (waited '+fmt(b.e-b.s)+')':b.k===3?'a response without its request':fmt(b.e-b.s)))+' · conn '+D.lanes[b.l][0]+(b.err?' · '+b.err:'')+' · click: frame '+b.f;
tip.style.left=(ev.clientX+12)+'px';tip.style.top=(ev.clientY+12)+'px';tip.hidden=false});
svg.addEventListener('mouseout',()=>{tip.hidden=true});
svg.addEventListener('click',ev=>{if(dragged||ev.detail>1){dragged=false;return}const b=mark(ev);if(!b)return;const h='#frame-'+b.f;if(location.hash===h)dispatchEvent(new HashChangeEvent('hashchange'));else location.hash=h});
const at=ev=>ev.clientX-svg.getBoundingClientRect().left;
svg.addEventListener('mousedown',ev=>{const px=Math.min(at(ev),LW+PW);if(px<LW)return;dragged=false;from=px;sel=el('rect',{x:px,y:0,width:0,height:H,class:'sel'},svg);ev.preventDefault()});
svg.addEventListener('mousemove',ev=>{if(from===null)return;const px=Math.min(Math.max(at(ev),LW),LW+PW);sel.setAttribute('x',Math.min(px,from));sel.setAttribute('width',Math.abs(px-from))});
const up=ev=>{if(from===null)return;const px=Math.min(Math.max(at(ev),LW),LW+PW),a=Math.min(px,from),b=Math.max(px,from);from=null;
if(b-a>4){dragged=true;const t=p=>v0+(p-LW)/PW*(v1-v0);let s=t(a),e=t(b);if(e-s<MIN){const m=(s+e)/2;s=Math.max(0,m-MIN/2);e=Math.min(full,s+MIN)}[v0,v1]=[s,e];draw()}else sel.remove()};
svg.addEventListener('mouseup',up);window.onmouseup=ev=>{if(from!==null&&!svg.contains(ev.target))up(ev)};
svg.addEventListener('dblclick',()=>{dragged=false;v0=0;v1=full;draw()})};
const zoom=f=>{const m=(v0+v1)/2,r=Math.max(MIN,Math.min(full,(v1-v0)*f))/2;v0=Math.max(0,m-r);v1=Math.min(full,v0+2*r);v0=Math.max(0,v1-2*r);draw()};
for(const b of document.querySelectorAll('[data-zoom]'))b.addEventListener('click',()=>{const z=b.dataset.zoom;if(z==='reset'){v0=0;v1=full;draw()}else zoom(z==='in'?0.5:2)});
draw()})();
(()=>{const v=document.getElementById('viewer');if(!v)return;const where={},order=[],cache=new Map();let cur=null;
for(const e of document.querySelectorAll('pre.fd'))for(const n of e.dataset.frames.split(','))if(n!==''){where[n]=e;order.push(+n)}
order.sort((a,b)=>a-b);
const h=s=>String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
const chunk=e=>{if(!cache.has(e)){const bin=Uint8Array.from(atob(e.textContent),c=>c.charCodeAt(0));
cache.set(e,new Response(new Blob([bin]).stream().pipeThrough(new DecompressionStream('gzip'))).json())}return cache.get(e)};
const figure=(n,[head,cap,err,hex,lines])=>{const id='v'+n,len=hex.length/2,own=new Int32Array(len).fill(-1);
lines.forEach((l,i)=>{if(l[5]&1)return;for(let b=l[2];b<Math.min(len,l[2]+l[3]);b++)own[b]=i});
let s='<section id=frame-'+n+'><h3>'+h(head)+'</h3><figure id='+id+'><figcaption>'+h(cap)+'</figcaption>';if(err)s+='<p class=err>'+h(err)+'</p>';
if(len){s+='<div class=fig><table class=grid><caption>byte layout ('+len+' bytes, 16 bytes per row)</caption><tr><th></th>';
for(let c=0;c<16;c++)s+='<th>'+c.toString(16).toUpperCase()+'</th>';s+='</tr>';
for(let r=0;r<len;r+=16){s+='<tr><th>'+r.toString(16).padStart(4,'0')+'</th>';for(let b=r;b<Math.min(len,r+16);b++){const o=own[b],x=hex.substr(2*b,2);
s+=o<0?'<td data-offset='+b+'>'+x+'</td>':'<td class=g'+lines[o][4]+' data-offset='+b+' data-n='+o+'>'+x+'</td>'}s+='</tr>'}
s+='</table><div class=tree><div class=th>object tree</div>';
lines.forEach((l,i)=>{s+='<div id='+id+'n'+i+' class=n data-offset='+l[2]+' data-len='+l[3]+(l[5]&1?' data-d':'')+(l[6]?' title="'+h(l[6])+'"':'')+'><span class=p>'+h(l[0])+'</span>'+h(l[1])+'</div>'});
s+='</div></div>'}return s+'</figure></section>'};
const open=async n=>{cur=n;const e=where[n];
if(!e){v.innerHTML='<p class=note>Frame '+n+' is not embedded in this report: <code>kwire capture '+h(v.dataset.file)+' --frame '+n+'</code> shows it.</p>';v.scrollIntoView();return}
v.innerHTML='<p class=note>Opening frame '+n+'…</p>';
try{const d=await chunk(e);if(cur!==n)return;v.innerHTML=d[n]?figure(n,d[n]):'<p class=err>Frame '+n+' is missing from its chunk.</p>'}catch(x){cache.delete(e);v.innerHTML='<p class=err>This browser could not inflate the frame data: '+h(x)+'</p>'}v.scrollIntoView()};
const fromHash=()=>{const m=/^#frame-(\d+)$/.exec(location.hash);if(m)open(+m[1])};
addEventListener('hashchange',fromHash);
document.addEventListener('click',ev=>{const a=ev.target.closest('a[href^="#frame-"]');if(a&&a.getAttribute('href')===location.hash){ev.preventDefault();fromHash()}});
const go=d=>{if(!order.length)return;let n;if(cur===null)n=order[0];else if(d>0)n=order.find(x=>x>cur);else n=[...order].reverse().find(x=>x<cur);if(n!==undefined)location.hash='#frame-'+n};
document.getElementById('next-frame').addEventListener('click',()=>go(1));document.getElementById('prev-frame').addEventListener('click',()=>go(-1));
fromHash()})();
document.body.dataset.readyMs=Math.round(performance.now());
"##;
