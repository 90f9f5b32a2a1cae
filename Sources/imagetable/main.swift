print("imagetable: not yet")
