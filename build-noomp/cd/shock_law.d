build-noomp/cd/shock_law.o: cd/shock_law.c cd/shock_law.h common/vec3.h
cd/shock_law.h:
common/vec3.h:
