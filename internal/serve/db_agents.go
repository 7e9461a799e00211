package serve

// The agents table: the process group of each session's running agent, so
// that a daemon started after a kill -9 ends what the dead one left. A
// call's start records its group; the transaction that saves the call's
// iteration forgets it (SaveState).

// AgentGroup is an agent process group a loop started: its id and its
// leader's start time, so a later daemon ends it and only it.
type AgentGroup struct {
	Session string
	PGID    int
	Start   uint64
}

// SetAgentGroup records (pgid 0: forgets) the session's running agent.
func (d *DB) SetAgentGroup(session string, pgid int, start uint64) error {
	if pgid == 0 {
		_, err := d.st.clearGroup.Exec(session)
		return dbErr(err)
	}
	_, err := d.st.setGroup.Exec(session, pgid, int64(start))
	return dbErr(err)
}

// AgentGroups lists the recorded agent process groups.
func (d *DB) AgentGroups() ([]AgentGroup, error) {
	rows, err := d.ro.Query(`SELECT session, pgid, start FROM agents`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AgentGroup
	for rows.Next() {
		var g AgentGroup
		var start int64
		if err := rows.Scan(&g.Session, &g.PGID, &start); err != nil {
			return nil, err
		}
		g.Start = uint64(start)
		out = append(out, g)
	}
	return out, rows.Err()
}
