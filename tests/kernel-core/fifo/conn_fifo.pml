/* The connection FIFO and step protocol (DESIGN.md), as mkccl runs it on
 * the host path: a send executor publishes steps into its connection's
 * slots, the send proxy hands them to the net, the net carries them to a
 * posted receive, the receive proxy publishes them, the receive executor
 * consumes and frees them. STEPS slots are reused round-robin; an abort may
 * come at any time. Checked by spin (tests/kernel-core/fifo/spin_check.sh):
 *   safety   - a slot is written only when free (its previous step done),
 *              data is read only once published, and it is the right step;
 *   liveness - every process ends (all steps delivered, or the abort seen),
 *              under weak fairness. */
#define STEPS 2          /* NCCL_STEPS is 8; 2 already reuses every slot */
#define NSTEPS 3         /* steps the operation moves: slot 0 is reused */
#define SLOT(k) ((k) % STEPS)
#define EMPTY 255        /* size == -1 in the C code */

/* send connection (executor -> proxy) */
byte sendData[STEPS];    /* the step buffer: holds the step number written */
byte sendSize[STEPS];    /* connFifo[slot].size: EMPTY until published */
byte sendTail = 0;       /* steps published by the executor */
byte sendHead = 0;       /* steps freed by the proxy (net send completed) */
/* receive connection (proxy -> executor) */
byte recvData[STEPS];
byte recvTail = 0;       /* steps published by the proxy */
byte recvHead = 0;       /* steps consumed by the executor */
/* the net: a send posted, taken by the wire, landing in a posted receive */
byte sendPosted = 0;     /* isends posted (send proxy) */
byte sendWired = 0;      /* isends whose data the net has taken (complete) */
byte recvPosted = 0;     /* irecvs posted (receive proxy) */
byte recvLanded = 0;     /* irecvs whose data has arrived (complete) */
chan wire = [STEPS] of { byte };

bool abort = false;
byte ended = 0;          /* processes that reached their end */

inline wait_or_abort(cond) {
  if
  :: cond -> skip
  :: abort -> goto out
  fi
}

proctype SendExecutor() {
  byte k = 0;
  do
  :: k < NSTEPS ->
     /* Free: head within STEPS of the step (the slot's previous use done). */
     wait_or_abort(sendHead + STEPS > k);
     assert(sendSize[SLOT(k)] == EMPTY);          /* never reused before free */
     sendData[SLOT(k)] = k;                       /* data before size */
     sendSize[SLOT(k)] = 1;                       /* size before tail */
     sendTail = k + 1;
     k++
  :: k == NSTEPS -> break
  od;
out:
  ended++
}

proctype SendProxy() {
  byte done = 0;
  do
  :: sendPosted < NSTEPS && sendTail > sendPosted && !abort ->
     assert(sendSize[SLOT(sendPosted)] != EMPTY);  /* published before it is sent */
     sendPosted++
  :: done < sendWired ->                          /* net test(): send complete */
     sendSize[SLOT(done)] = EMPTY;                /* clear before head */
     done++;
     sendHead = done
  :: done == NSTEPS -> break
  :: abort -> break
  od;
  ended++
}

proctype Net() {
  do
  :: sendWired < sendPosted && nfull(wire) ->
     assert(sendData[SLOT(sendWired)] == sendWired);  /* the buffer still holds the step sent */
     wire ! sendData[SLOT(sendWired)];
     sendWired++
  :: recvLanded < recvPosted && nempty(wire) ->
     wire ? recvData[SLOT(recvLanded)];
     recvLanded++
  :: recvLanded == NSTEPS -> break
  :: abort -> break
  od;
  ended++
}

proctype RecvProxy() {
  do
  :: recvPosted < NSTEPS && recvHead + STEPS > recvPosted && !abort ->
     recvPosted++                                 /* irecv into a free slot */
  :: recvTail < recvLanded ->                     /* net test(): receive complete */
     recvTail++                                   /* publish */
  :: recvTail == NSTEPS -> break
  :: abort -> break
  od;
  ended++
}

proctype RecvExecutor() {
  byte k = 0;
  do
  :: k < NSTEPS ->
     wait_or_abort(recvTail > k);
     assert(recvData[SLOT(k)] == k);              /* read only once published, and the right step */
     recvHead = k + 1;                            /* consumed: the slot is free */
     k++
  :: k == NSTEPS -> break
  od;
out:
  ended++
}

proctype Aborter() {
  if
  :: abort = true   /* ncclCommAbort, a dead peer, MKCCL_TIMEOUT */
  :: skip
  fi;
  ended++
}

init {
  byte i;
  for (i : 0 .. STEPS - 1) {
    sendSize[i] = EMPTY;
    recvData[i] = EMPTY
  }
  atomic {
    run SendExecutor(); run SendProxy(); run Net(); run RecvProxy(); run RecvExecutor(); run Aborter()
  }
}

/* Every process ends: all steps delivered, or the abort seen by all. */
ltl all_end { <> (ended == 6) }
